# The main job: the dev stack on the local cloud, with everything it needs installed or reused first.
.PHONY: up down preview recover

up: venv engine-and-localcloud
	scripts/stack.sh up

preview: venv engine-and-localcloud
	scripts/stack.sh preview

down: venv engine
	scripts/stack.sh down

recover: venv engine
	scripts/stack.sh recover
