# The main job: the dev stack on the local cloud, with everything it needs installed or reused first.
.PHONY: up down preview recover watch

up: venv engine-and-localcloud
	scripts/stack.sh up

preview: venv engine-and-localcloud
	scripts/stack.sh preview

down: venv engine
	scripts/stack.sh down

watch: venv engine
	scripts/stack.sh watch

recover: venv engine
	scripts/stack.sh recover
