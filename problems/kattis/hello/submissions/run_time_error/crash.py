name = input()
raise SystemExit(3)
