module loadgen

go 1.21
