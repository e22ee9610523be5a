package launchd

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The plist is escaped and read here with a few functions of our own, not
// encoding/xml or regexp: every mcpx command links this package (package
// service picks launchd on macOS), and linking encoding/xml's decoder alone
// makes every process build its 250-entry HTMLEntity map at start (about
// 7 % of `mcpx version`'s instructions). A plist is a small, regular XML
// document; plist_test.go holds this code to encoding/xml.

// xmlEscape escapes s for XML character data or an attribute value, as
// encoding/xml's EscapeText does: the five markup characters and tab,
// newline and carriage return as references, and what XML 1.0 cannot hold
// (control characters, invalid UTF-8, U+FFFE, U+FFFF) as U+FFFD.
func xmlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '"':
			b.WriteString("&#34;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\t':
			b.WriteString("&#x9;")
		case r == '\n':
			b.WriteString("&#xA;")
		case r == '\r':
			b.WriteString("&#xD;")
		case !xmlChar(r) || r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i-n : i])
		}
	}
	return b.String()
}

// xmlChar reports whether r is a character XML 1.0 allows (its Char
// production).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// stripComments returns b without its XML comments (<!-- ... -->); an
// unclosed comment is kept.
func stripComments(b []byte) []byte {
	var out []byte
	s := string(b)
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			break
		}
		out = append(out, s[:i]...)
		s = s[i+4+j+3:]
	}
	return append(out, s...)
}

// xmlToken is one piece of an XML document as programOf needs it.
type xmlToken struct {
	kind int    // tokStart, tokEnd or tokText
	name string // element name (tokStart, tokEnd)
	text string // decoded character data (tokText)
}

const (
	tokStart = iota
	tokEnd
	tokText
)

var errXMLEOF = errors.New("XML syntax error: unexpected EOF")

// xmlScanner splits an XML document into start tags, end tags and
// character data, leniently (as encoding/xml's Decoder with Strict off):
// declarations, processing instructions and comments are skipped, an
// unknown entity is kept as written, end tags are not matched against
// their start tags. A self-closing element is a start and an end.
type xmlScanner struct {
	s       string
	pending *xmlToken // the end of a self-closing element
}

// next returns the next token, io.EOF at the end of the document.
func (x *xmlScanner) next() (xmlToken, error) {
	if t := x.pending; t != nil {
		x.pending = nil
		return *t, nil
	}
	for {
		if x.s == "" {
			return xmlToken{}, io.EOF
		}
		if x.s[0] != '<' {
			i := strings.IndexByte(x.s, '<')
			if i < 0 {
				i = len(x.s)
			}
			text := x.s[:i]
			x.s = x.s[i:]
			return xmlToken{kind: tokText, text: decodeXMLText(text)}, nil
		}
		switch {
		case strings.HasPrefix(x.s, "<!--"):
			if !x.skipPast(4, "-->") {
				return xmlToken{}, errXMLEOF
			}
		case strings.HasPrefix(x.s, "<![CDATA["):
			i := strings.Index(x.s[9:], "]]>")
			if i < 0 {
				return xmlToken{}, errXMLEOF
			}
			text := x.s[9 : 9+i]
			x.s = x.s[9+i+3:]
			return xmlToken{kind: tokText, text: normalizeNewlines(text)}, nil
		case strings.HasPrefix(x.s, "<?"):
			if !x.skipPast(2, "?>") {
				return xmlToken{}, errXMLEOF
			}
		case strings.HasPrefix(x.s, "<!"):
			if !x.skipDeclaration() {
				return xmlToken{}, errXMLEOF
			}
		default:
			return x.tag()
		}
	}
}

// skipPast drops everything up to and including the first end at or
// after offset from; false when there is none.
func (x *xmlScanner) skipPast(from int, end string) bool {
	i := strings.Index(x.s[from:], end)
	if i < 0 {
		return false
	}
	x.s = x.s[from+i+len(end):]
	return true
}

// skipDeclaration drops a <!DOCTYPE ...> (or another <!...>), with its
// quoted strings and internal subset in brackets.
func (x *xmlScanner) skipDeclaration() bool {
	depth := 0
	for i := 2; i < len(x.s); i++ {
		switch c := x.s[i]; c {
		case '"', '\'':
			j := strings.IndexByte(x.s[i+1:], c)
			if j < 0 {
				return false
			}
			i += 1 + j
		case '[':
			depth++
		case ']':
			depth--
		case '>':
			if depth <= 0 {
				x.s = x.s[i+1:]
				return true
			}
		}
	}
	return false
}

// tag reads a start or end tag at the front of the input.
func (x *xmlScanner) tag() (xmlToken, error) {
	if len(x.s) < 2 { // a document cut after its "<"
		return xmlToken{}, errXMLEOF
	}
	end := x.s[1] == '/'
	// Find the closing '>', skipping quoted attribute values.
	i := 1
	for ; i < len(x.s) && x.s[i] != '>'; i++ {
		if c := x.s[i]; c == '"' || c == '\'' {
			j := strings.IndexByte(x.s[i+1:], c)
			if j < 0 {
				return xmlToken{}, errXMLEOF
			}
			i += 1 + j
		}
	}
	if i >= len(x.s) {
		return xmlToken{}, errXMLEOF
	}
	body := x.s[1:i]
	x.s = x.s[i+1:]
	if end {
		return xmlToken{kind: tokEnd, name: tagName(body[1:])}, nil
	}
	t := xmlToken{kind: tokStart, name: tagName(body)}
	if strings.HasSuffix(body, "/") {
		x.pending = &xmlToken{kind: tokEnd, name: t.name}
	}
	return t, nil
}

// tagName is the local name of a tag's body ("plist" of `plist
// version="1.0"`, "string" of "x:string").
func tagName(body string) string {
	body = strings.TrimRight(body, "/")
	if i := strings.IndexAny(body, " \t\r\n"); i >= 0 {
		body = body[:i]
	}
	if i := strings.IndexByte(body, ':'); i >= 0 {
		body = body[i+1:]
	}
	return body
}

// xmlEntities are the entities XML predefines.
var xmlEntities = [...]struct{ name, value string }{
	{"lt", "<"}, {"gt", ">"}, {"amp", "&"}, {"apos", "'"}, {"quot", `"`},
}

// decodeXMLText replaces the entity and character references of character
// data and normalises its line ends; a reference that is not one is kept
// as written.
func decodeXMLText(s string) string {
	s = normalizeNewlines(s)
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexByte(s, ';')
		if v, ok := xmlReference(s[1:max(j, 1)]); j > 0 && ok {
			b.WriteString(v)
			s = s[j+1:]
			continue
		}
		b.WriteByte('&')
		s = s[1:]
	}
}

// xmlReference is the text of the reference &name; (name without & and ;).
func xmlReference(name string) (string, bool) {
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(num, "x"); ok {
			num, base = hex, 16
		}
		n, err := strconv.ParseUint(num, base, 32)
		if err != nil || num == "" || num[0] == '+' || !xmlChar(rune(n)) {
			return "", false
		}
		return string(rune(n)), true
	}
	for _, e := range xmlEntities {
		if e.name == name {
			return e.value, true
		}
	}
	return "", false
}

// normalizeNewlines turns "\r\n" and a lone "\r" into "\n", as an XML
// processor does.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// elementText reads up to the end of the element whose start tag was just
// read and returns its own character data (a nested element's is skipped),
// as encoding/xml's DecodeElement into a string does.
func (x *xmlScanner) elementText() (string, error) {
	var b strings.Builder
	depth := 0
	for {
		t, err := x.next()
		if err == io.EOF {
			return "", errXMLEOF
		}
		if err != nil {
			return "", err
		}
		switch t.kind {
		case tokStart:
			depth++
		case tokEnd:
			if depth == 0 {
				return b.String(), nil
			}
			depth--
		case tokText:
			if depth == 0 {
				b.WriteString(t.text)
			}
		}
	}
}

// programOf returns ProgramArguments[0] (or Program) of a plist.
func programOf(r io.Reader) (string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	x := &xmlScanner{s: string(data)}
	depth, lastKey, inArgs := 0, "", false
	for {
		t, err := x.next()
		if err == io.EOF {
			return "", errors.New("no ProgramArguments")
		}
		if err != nil {
			return "", err
		}
		switch t.kind {
		case tokStart:
			depth++
			switch {
			case t.name == "key" && depth == 3: // plist > dict > key
				k, err := x.elementText()
				if err != nil {
					return "", err
				}
				depth--
				lastKey = strings.TrimSpace(k)
			case t.name == "array" && depth == 3 && lastKey == "ProgramArguments":
				inArgs = true
			case t.name == "string" && (inArgs && depth == 4 || depth == 3 && lastKey == "Program"):
				return x.elementText()
			}
		case tokEnd:
			depth--
		}
	}
}
