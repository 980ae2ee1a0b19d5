from kura.cli import run

run()
