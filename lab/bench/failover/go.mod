module hafailover

go 1.21
