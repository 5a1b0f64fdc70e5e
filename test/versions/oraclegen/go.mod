module github.com/scale-preview/scale-preview/test/versions/oraclegen

go 1.26.0
