from kura.cli.entry import main

main()
