"""``agent templates list | show | edit | path``: the templates ``agent run --save`` writes."""

from __future__ import annotations

import typer

from agentcli.textsafe import safe_line, safe_text

templates_app = typer.Typer(
    help="Saved run templates: save with agent run --save NAME, use with agent run -T NAME.",
    no_args_is_help=True, rich_markup_mode=None)


@templates_app.command("list")
def templates_list() -> None:
    """Each template: NAME<TAB>its prompt (or system text), on one line."""
    from agentcli.saved_templates import load_template, template_names

    names = template_names()
    for name in names:
        template = load_template(name)
        summary = " ".join((template.prompt or template.system or "").split())
        if len(summary) > 70:
            summary = summary[:69] + "…"
        typer.echo(f"{safe_line(name)}\t{safe_line(summary)}")
    if not names:
        typer.echo('no templates; save one with agent run --save NAME "PROMPT"', err=True)


@templates_app.command("show")
def templates_show(name: str = typer.Argument(..., help="The template name.")) -> None:
    """Print a template's YAML."""
    from agentcli.saved_templates import load_template

    typer.echo(safe_text(load_template(name).to_yaml()), nl=False)


@templates_app.command("edit")
def templates_edit(
    name: str = typer.Argument(..., help="The template name (new or saved)."),
) -> None:
    """Open a template in $VISUAL / $EDITOR (a new one starts from a skeleton); it is checked
    when the editor exits."""
    from agentcli.cli.editor import edit_file
    from agentcli.files import read_small_text, write_atomic
    from agentcli.saved_templates import parse_template, template_path

    path = template_path(name)
    if not path.is_file():
        write_atomic(path, f"# agent run -T {name}: $input is the question; -p KEY VALUE "
                           "fills $KEY\nprompt: |\n  $input\n")
    edit_file(path)
    parse_template(name, read_small_text(path, "template", "fix it"), str(path))
    typer.echo(f"template {name}: {path}", err=True)


@templates_app.command("path")
def templates_path() -> None:
    """The directory that holds the templates (it may not exist yet)."""
    from agentcli.saved_templates import templates_dir

    typer.echo(str(templates_dir()))
