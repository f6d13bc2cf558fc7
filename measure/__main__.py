from measure.cli import main

main()
