module digitsum

go 1.18
