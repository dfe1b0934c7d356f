module github.com/sluicesql/sluice

go 1.26.8
