from kura.entry import main

main()
