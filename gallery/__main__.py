from gallery.cli import main

main()
