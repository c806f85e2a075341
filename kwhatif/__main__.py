from kwhatif.cli.app import main

main()
