# The interface a person types; each target runs one script in scripts/.
# `make run` takes VCPUS=, MEM=, NODES=, REPEAT=, THREADS=, MODE=,
# DEFERRED_VCPUS= (see scripts/run.sh).

export VCPUS MEM NODES REPEAT THREADS MODE DEFERRED_VCPUS COVER

.PHONY: help tree export test gauntlet bisect matrix sparse kcsan kselftest mutate run cover clean distclean

help:
	@echo 'make tree       unpack Debian linux-source-6.12 into build/linux, apply patches/series'
	@echo 'make export     write the commits of build/linux to patches/ (and the cover letter)'
	@echo 'make test       what CI runs (45 min cold, 20 warm): checkpatch, kernel-doc, KUnit and'
	@echo '                in-guest tests on a debug kernel (lockdep, KASAN, UBSAN, kmemleak, fault'
	@echo '                injection, hang detectors), W=1, sparse, the configuration matrix'
	@echo 'make gauntlet   make test, then KUnit with CONFIG_KTASK=n and with KCSAN, make bisect,'
	@echo '                make run SCALE=1, the kernel'"'"'s long mm selftests'
	@echo 'make bisect     every commit builds with KTASK=y and =n (a stage of make gauntlet)'
	@echo 'make matrix     the changed objects build with NUMA=n, SMP=n, PREEMPT(_RT), features off'
	@echo 'make sparse     no sparse warning baseline lacks (after make test built build/kunit)'
	@echo 'make kcsan      the KUnit suite on a KCSAN kernel (a stage of make gauntlet, alone)'
	@echo 'make kselftest  the long mm selftests on make test'"'"'s debug kernel (gauntlet stage, alone)'
	@echo 'make mutate     each mutation of scripts/ktask_mutants.py in kernel/ktask.c against the'
	@echo '                KUnit boots: which rules no case checks (after make test; ~70 s each)'
	@echo 'make run        build the patched and the unpatched kernel, boot them in QEMU,'
	@echo '                print the ktask benchmark (VCPUS=n MEM=16G NODES=2 REPEAT=5 THREADS=1,2,4;'
	@echo '                MODE=deferred: only the deferred init boots, DEFERRED_VCPUS="1 2 4";'
	@echo '                MODE=model: only what the projection of 16 to 288 threads needs)'
	@echo 'make cover      put the tables of the last make run in the cover letter (then make export;'
	@echo '                COVER=busy after make run MODE=busy, COVER=model after MODE=model)'
	@echo 'make clean      remove the object directories, keep build/linux'
	@echo 'make distclean  remove all of build/, the kernel tree included'

tree:
	scripts/tree.sh

export:
	scripts/export.sh

test:
	scripts/test.sh

gauntlet:
	scripts/test.sh gauntlet

bisect:
	scripts/bisect.sh

matrix:
	scripts/matrix.sh

sparse:
	scripts/sparse.sh

kcsan:
	scripts/test.sh kcsan

kselftest:
	scripts/test.sh kselftest

mutate:
	scripts/mutate.py

run:
	scripts/run.sh

cover:
	scripts/cover.sh

clean:
	rm -rf build/kunit build/kunit-serial build/kunit-kcsan build/bisect build/matrix build/sparse-baseline build/run build/run-baseline build/*.log build/*.json build/accel

distclean:
	rm -rf build
