# Shortcuts for the README's commands.
.PHONY: run test bench
run:
	bash scripts/run.sh
test:
	bash scripts/test.sh
bench:
	bash scripts/bench.sh $(ARGS)
