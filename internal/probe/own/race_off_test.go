//go:build !race

package own

const raceBuild = false
