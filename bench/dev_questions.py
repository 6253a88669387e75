"""Development questions for tuning prompts and the Calculator on small models.

Issue 22: the 66 questions of ``hard_questions`` are the held-out bench and are not tuned
on. Changes for small models are tried on these 24 first (same three groups, other numbers
and wordings), then measured once on the 66.
"""

from __future__ import annotations

DEV: list[tuple[str, float]] = [
    # literal
    ("What is 458 + 367?", 825), ("What is 3000 - 1245?", 1755), ("What is 27 * 34?", 918),
    ("What is 756 / 12?", 63), ("What is 6.4 + 2.85?", 9.25), ("What is 15.5 * 6?", 93),
    ("What is 999 + 1?", 1000), ("What is 91 - 19?", 72),
    # needs reformulation
    ("What is 45% of 180?", 81), ("What is 2.5 percent of 4000?", 100),
    ("What is 4 to the power of 3?", 64), ("What is 11 squared?", 121),
    ("What is the square root of 225?", 15), ("What is the cube root of 64?", 4),
    ("What is 9 + 14 + 23?", 46), ("What is the sum of 5, 10 and 20?", 35),
    ("How many minutes are in 4 hours?", 240), ("What is 30% more than 120?", 156),
    # word problems
    ("A crate holds 36 apples. How many apples are in 12 crates?", 432),
    ("Tom has 80 dollars and spends 23 dollars. How much does he have left?", 57),
    ("A bus carries 45 people. How many people do 8 buses carry?", 360),
    ("A jacket costs 120 dollars and is on sale for 15% off. What is the sale price?", 102),
    ("Lisa walks 4 km a day. How many km does she walk in 3 weeks?", 84),
    ("Four friends share 100 dollars equally. How much does each get?", 25),
]
