// Package units formats quantities for people: sizes in bytes.
package units

import "fmt"

// Bytes formats a size in bytes with a binary unit: "512 B", "1.5 KiB",
// "12.3 MiB", "1.25 GiB".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
