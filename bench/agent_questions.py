"""A bench that measures the agent, not the Calculator: groups written before any run.

Issue 31 item 5. Fixed before the first run and never changed after it (a change would
mean a new group under a new name):

- ``wordreform``: word problems whose arithmetic needs a reformulation (percent of a story
  quantity, rates, units) before a calculator can take it;
- ``distract``: questions with numbers that do not take part in the answer;
- ``notool``: questions that need no tool (the right run answers without calling one);
- ``twotool``: a file the bench writes into the run's directory, read with ``read_file``,
  then a calculation on what it holds (tools ``llm-math,read_file``).

Issue 39 item 5 added three groups, fixed and committed before any run of them, under the
same rule (a change means a new group under a new name):

- ``units``: unit conversions (minutes and hours, grams and kilograms, litres, metres);
- ``restate``: restatement traps: questions whose numbers or words, copied as the answer, are
  wrong (the answer is never a number or phrase the question holds);
- ``filephrase``: two-step file tasks where the file is named inside a phrase (``the
  numbers in the file costs.txt``), tools ``llm-math,read_file``.

Graded by ``hard_questions.graded``: a number is right when the last number of the answer
is within 1 %; a text answer is right when it contains the expected word (case-insensitive).
No agentcli import: ``lc_hard.py`` reads this module from a LangChain environment.
"""

from __future__ import annotations

from hard_questions import graded

Expected = float | str

WORDREFORM: list[tuple[str, Expected]] = [
    ("A store sells a laptop for 900 dollars and gives a 15% discount. How many dollars is "
     "the discount?", 135),
    ("A car goes 240 km on 16 liters of fuel. How many km does it go per liter?", 15),
    ("A worker earns 18 dollars an hour and works 7.5 hours. How much does she earn?", 135),
    ("A printer prints 45 pages a minute. How many minutes does it need for 1,350 pages?",
     30),
    ("A garden is 9 meters long and 6 meters wide. Fencing costs 4 dollars a meter. How "
     "much does fencing the whole garden cost?", 120),
    ("A town of 32,000 people grew by 5%. How many people live there now?", 33600),
    ("A water tap fills 12 liters every 3 minutes. How many liters does it fill in an "
     "hour?", 240),
    ("A class of 30 students has 40% boys. How many girls are in the class?", 18),
]

DISTRACT: list[tuple[str, Expected]] = [
    ("In 2023, a bakery with 4 ovens sold 125 cakes on Monday and 175 cakes on Tuesday. "
     "How many cakes did it sell on the two days?", 300),
    ("Room 12 has 3 windows. What is 56 divided by 7?", 8),
    ("My phone number ends in 4455 and I am 31 years old. What is 31 times 3?", 93),
    ("A 5-year-old dog weighs 20 kg and eats 300 grams of food a day. How many grams does "
     "it eat in 10 days?", 3000),
    ("Bus 42 leaves at 8:15 with 36 seats, and 29 people get on. How many seats are "
     "empty?", 7),
    ("On floor 9, a shop has 14 shelves with 25 books each. How many books are on the "
     "shelves?", 350),
    ("Anna is 12, Ben is 15 and their mother is 41. What is the sum of the children's "
     "ages?", 27),
    ("A 2-liter bottle costs 3 dollars. I have 50 dollars. How much do 4 bottles cost in "
     "dollars?", 12),
]

NOTOOL: list[tuple[str, Expected]] = [
    ("How many sides does a hexagon have?", 6),
    ("What is the capital of France?", "Paris"),
    ("How many legs does a spider have?", 8),
    ("What color do you get by mixing blue and yellow?", "green"),
    ("How many days are there in a week?", 7),
    ("What is the opposite of hot?", "cold"),
    ("How many months are in a year?", 12),
    ("Which planet do we live on?", "Earth"),
]

# (question, expected, {file name: text}) — the bench writes the files into the run's cwd.
TWOTOOL: list[tuple[str, Expected, dict[str, str]]] = [
    ("The file prices.txt lists three prices. What is their total?", 57.5,
     {"prices.txt": "apples: 12.50\nbread: 20.00\ncheese: 25.00\n"}),
    ("Read hours.txt. How many hours were worked in total?", 37,
     {"hours.txt": "Monday 8\nTuesday 7\nWednesday 9\nThursday 6\nFriday 7\n"}),
    ("The file order.txt holds a quantity and a unit price. What does the order cost?", 336,
     {"order.txt": "quantity: 14\nunit price: 24\n"}),
    ("Read scores.txt and give the average score.", 82,
     {"scores.txt": "76\n88\n82\n"}),
    ("The file budget.txt has a budget and what was spent. How much is left?", 1275,
     {"budget.txt": "budget: 5000\nspent: 3725\n"}),
    ("Read distance.txt. At the speed it gives, how long in hours does the trip take?", 4,
     {"distance.txt": "distance: 260 km\nspeed: 65 km per hour\n"}),
    ("The file tax.txt has a price and a tax rate. What is the tax amount?", 16,
     {"tax.txt": "price: 200\ntax rate: 8%\n"}),
    ("Read boxes.txt. How many items are there in all the boxes?", 96,
     {"boxes.txt": "boxes: 8\nitems per box: 12\n"}),
]

UNITS: list[tuple[str, Expected]] = [
    ("How many minutes are in 6 hours?", 360),
    ("How many grams are in 3.75 kilograms?", 3750),
    ("How many kilograms are 4,500 grams?", 4.5),
    ("How many hours are in 390 minutes?", 6.5),
    ("How many seconds are in 15 minutes?", 900),
    ("How many meters are in 3.2 kilometers?", 3200),
    ("How many milliliters are in 2.4 liters?", 2400),
    ("How many days are 96 hours?", 4),
]

RESTATE: list[tuple[str, Expected]] = [
    ("A pack has 6 bottles. How many bottles are in 9 packs?", 54),
    ("What is 30% of 90?", 27),
    ("Lena is 14 years old. How old will she be in 14 years?", 28),
    ("A 45-meter rope is cut into 5 equal pieces. How long is each piece in meters?", 9),
    ("A shop had 80 chairs and sold a quarter of them. How many chairs are left?", 60),
    ("How many minutes are in 3 hours and 20 minutes?", 200),
    ("Which month comes right after March?", "April"),
    ("The price went from 50 dollars to 65 dollars. By how many dollars did it rise?", 15),
]

FILEPHRASE: list[tuple[str, Expected, dict[str, str]]] = [
    ("What is the sum of the numbers in the file costs.txt?", 45,
     {"costs.txt": "14\n22\n9\n"}),
    ("Using the list of weights in parcels.txt, how many kilograms do the parcels weigh "
     "together?", 8, {"parcels.txt": "parcel A: 2.5 kg\nparcel B: 4 kg\nparcel C: 1.5 kg\n"}),
    ("The timesheet in minutes.txt lists minutes worked per day. How many hours is that in "
     "total?", 6, {"minutes.txt": "Mon 90\nTue 120\nWed 150\n"}),
    ("What is the average of the temperatures in temps.txt?", 21,
     {"temps.txt": "18\n22\n20\n24\n"}),
    ("Count of visitors in visitors.txt: how many visitors came in all?", 440,
     {"visitors.txt": "morning: 135\nafternoon: 210\nevening: 95\n"}),
    ("What is the price difference between the two items in items.txt?", 27,
     {"items.txt": "lamp: 48\nchair: 75\n"}),
    ("From the numbers in stock.txt, how many units are left after the sales?", 175,
     {"stock.txt": "in stock: 320\nsold: 145\n"}),
    ("What is the total cost of the order written in the file order list.txt?", 12,
     {"order list.txt": "4 notebooks at 3 dollars each\n"}),
]

GROUPS: dict[str, list[tuple[str, Expected]]] = {
    "wordreform": WORDREFORM, "distract": DISTRACT, "notool": NOTOOL,
    "twotool": [(q, e) for q, e, _ in TWOTOOL],
    "units": UNITS, "restate": RESTATE, "filephrase": [(q, e) for q, e, _ in FILEPHRASE],
}
FILES: dict[str, dict[str, str]] = {q: files for q, _, files in [*TWOTOOL, *FILEPHRASE]}
# The tools each group's runs get (the default otherwise: the Calculator alone).
TOOLS: dict[str, str] = {"twotool": "llm-math,read_file", "filephrase": "llm-math,read_file"}

__all__ = ["FILES", "GROUPS", "TOOLS", "graded"]
