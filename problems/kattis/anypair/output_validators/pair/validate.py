import sys


def main():
    n = int(open(sys.argv[1]).read())
    feedback = sys.argv[3]
    tokens = sys.stdin.buffer.read().split()
    def reject(why):
        with open(feedback + "judgemessage.txt", "w") as f:
            f.write(why + "\n")
        sys.exit(43)
    if len(tokens) != 2:
        reject(f"expected two integers, got {len(tokens)} tokens")
    try:
        a, b = int(tokens[0]), int(tokens[1])
    except ValueError:
        reject("not integers")
    if a < 1 or b < 1 or a + b != n:
        reject(f"{a} + {b} is not {n} with both positive")
    sys.exit(42)


main()
