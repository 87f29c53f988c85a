package report

import "strings"

// shortCodeLen is the length past which ShortCode shortens a name.
const shortCodeLen = 48

// ShortCode shortens a C++ function name for a line of the terminal: its
// template arguments and parameter lists become "<…>" and "(…)", as in
// "void miniFE::cg_solve<…>(…)+0x947" for a name of 600 bytes. A name of
// shortCodeLen bytes or fewer stays whole, and so does a file and line
// after " at " (code after it, as in "MPI_Irecv at ExchangeHalo(…)+0x155",
// is shortened in turn) and any parenthesis that follows a space
// ("(approximate)", "(serial code)"). The JSON and CSV reports keep the
// whole name.
func ShortCode(s string) string {
	head, tail := s, ""
	if i := strings.Index(s, " at "); i >= 0 {
		// "MPI_Irecv at ExchangeHalo(…)+0x155": what follows may be code
		// too; a file and line stay as they are.
		head, tail = s[:i], " at "+ShortCode(s[i+len(" at "):])
	}
	if len(head) <= shortCodeLen || !strings.ContainsAny(head, "<(") {
		return head + tail
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(head); i++ {
		c := head[i]
		if (c == '<' || c == '(') && i > 0 && opensList(head, i) {
			if j := closing(head, i); j > i+1 {
				b.WriteByte(c)
				b.WriteString("…")
				b.WriteByte(head[j])
				i = j
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String() + tail
}

// opensList reports whether the bracket at s[i] opens template arguments
// or a parameter list: it follows a name (or a closing '>' before a
// parameter list) and is not the name of an operator ("operator<",
// "operator()").
func opensList(s string, i int) bool {
	if inOperator(s[:i], s[i]) {
		return false
	}
	p := s[i-1]
	name := p == '_' || p >= 'a' && p <= 'z' || p >= 'A' && p <= 'Z' || p >= '0' && p <= '9'
	return name || s[i] == '(' && (p == '>' || operatorName(s[:i]))
}

// operatorName reports whether s ends with an operator's name and its
// symbols ("operator<", "operator()", "operator==").
func operatorName(s string) bool {
	return !strings.HasSuffix(s, "operator") && strings.HasSuffix(strings.TrimRight(s, "<>=!+-*/%&|^~[](),"), "operator")
}

// inOperator reports whether bracket c after s is part of an operator's
// name: the first '(' of "operator()", a '<' of "operator<" or "operator<<".
func inOperator(s string, c byte) bool {
	if c == '(' {
		return strings.HasSuffix(s, "operator")
	}
	return strings.HasSuffix(strings.TrimRight(s, "<"), "operator")
}

// closing returns the index of the bracket that closes the one at s[i]
// (nesting of both kinds counted), or −1.
func closing(s string, i int) int {
	var stack []byte
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '<', '(':
			if j > i && inOperator(s[:j], s[j]) {
				continue
			}
			stack = append(stack, s[j])
		case '>', ')':
			if len(stack) == 0 || (s[j] == '>') != (stack[len(stack)-1] == '<') {
				return -1 // unbalanced: leave the name as it is
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j
			}
		}
	}
	return -1
}
