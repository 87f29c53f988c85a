package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes r as indented JSON. Field order follows the schema types,
// so equal reports are equal byte for byte.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
