"""Repository tasks (SWE-bench's kind): a candidate is a patch to a repository at a commit, judged by the
repository's own tests. This package holds the host side's pure parts: what a patch touches
(patches.py), the runners' log parsers (parsers/, one module per runner) and SWE-bench's grading rule
(grading.py). Reading the rows, building the environments and running a candidate come in later steps
(issue 44); nothing here runs a container. It sits in inputs/: the parser and the rule are facts of a task's
spec, which the execution side will call as it calls the judge's grading."""
