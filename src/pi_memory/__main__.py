from pi_memory.launch import main

main()
