from pi_memory.cli import main

main()
