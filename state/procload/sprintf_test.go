package procload

import "fmt"

func sprintf(format string, a ...any) string {
	conv := make([]any, len(a))
	for i, v := range a {
		switch v := v.(type) {
		case float64:
			conv[i] = int64(v)
		default:
			conv[i] = v
		}
	}
	return fmt.Sprintf(format, conv...)
}
