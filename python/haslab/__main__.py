from .cli_main import main

main(prog_name="haslab")
