"""The interactor: tells the submission n, answers "? x" with <, > or = (the secret is less than, greater
than or equal to x), and accepts "! x" when x is the secret and at most ceil(log2 n) + 1 questions came first."""
import math
import sys


def main():
    n, secret = map(int, open(sys.argv[1]).read().split())
    feedback = sys.argv[3]
    budget = math.ceil(math.log2(n)) + 1 if n > 1 else 1

    def verdict(ok, why):
        with open(feedback + "judgemessage.txt", "w") as f:
            f.write(why + "\n")
        sys.exit(42 if ok else 43)

    print(n, flush=True)
    asked = 0
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 2 or parts[0] not in ("?", "!") or not parts[1].lstrip("-").isdigit():
            verdict(False, f"not a question or an answer: {line[:40]!r}")
        x = int(parts[1])
        if parts[0] == "!":
            verdict(x == secret, f"answered {x} after {asked} questions")
        asked += 1
        if asked > budget:
            verdict(False, f"more than {budget} questions")
        print("<" if secret < x else ">" if secret > x else "=", flush=True)
    verdict(False, "the submission ended without an answer")


main()
