from kforensics.cli import main

main()
