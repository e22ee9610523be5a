package launchd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
)

// programOfXML is programOf written with encoding/xml (as it was before
// the package stopped linking it): the reference the tests hold the plain
// reader to.
func programOfXML(r io.Reader) (string, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	depth, lastKey, inArgs := 0, "", false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", errors.New("no ProgramArguments")
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case t.Name.Local == "key" && depth == 3:
				var k string
				if err := d.DecodeElement(&k, &t); err != nil {
					return "", err
				}
				depth--
				lastKey = strings.TrimSpace(k)
			case t.Name.Local == "array" && depth == 3 && lastKey == "ProgramArguments":
				inArgs = true
			case t.Name.Local == "string" && (inArgs && depth == 4 || depth == 3 && lastKey == "Program"):
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return "", err
				}
				return s, nil
			}
		case xml.EndElement:
			depth--
		}
	}
}

// plistCorpus are plists as mcpx, plutil and people write them, and the
// odd ones a hand edit leaves.
var plistCorpus = []string{
	// mcpx's own, rendered below as well.
	`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by mcpx v1; ` + "`mcpx uninstall`" + ` removes it. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>dev.mcpx.k1</string>
	<key>ProgramArguments</key>
	<array>
		<string>/Applications/My &lt;Tools&gt; &amp; Co/mcpxd</string>
		<string>daemon</string>
	</array>
</dict>
</plist>`,
	// Program instead of ProgramArguments, CRLF line ends, a character
	// reference, CDATA.
	"<?xml version=\"1.0\"?>\r\n<plist version=\"1.0\">\r\n<dict>\r\n\t<key>Label</key>\r\n\t<string>x</string>\r\n\t<key>Program</key>\r\n\t<string>/opt/a&#233;&#x41;<![CDATA[<b>&amp;]]>\r\nz</string>\r\n</dict>\r\n</plist>",
	// A key with spaces around it, an empty dict before, a self-closing
	// element, a comment inside the array, attributes with '>' in them.
	`<plist version="1.0"><dict><key>Sockets</key><dict/><key>RunAtLoad</key><true/>
<key> ProgramArguments </key><array><!-- first --><string a="x>y">/bin/x</string></array></dict></plist>`,
	// An unknown entity and a lone ampersand stay as written.
	`<plist><dict><key>ProgramArguments</key><array><string>/a&nbsp;b & c &#xZZ; d&#65</string></array></dict></plist>`,
	// A DOCTYPE with an internal subset, a processing instruction, a
	// namespace prefix.
	`<!DOCTYPE plist [ <!ENTITY x "y>"> ]><?pi stuff?><plist><dict><key>ProgramArguments</key><array><p:string>/p</p:string></array></dict></plist>`,
	// No program at all; ProgramArguments deeper than the top dict.
	`<plist><dict><key>Label</key><string>x</string></dict></plist>`,
	`<plist><dict><key>Sockets</key><dict><key>ProgramArguments</key><array><string>/no</string></array></dict></dict></plist>`,
	// Text and elements inside a key.
	`<plist><dict><key>Program<i>x</i>Arguments</key><array><string>/y</string></array><key>Program</key><string>/z<b>q</b>w</string></dict></plist>`,
	"",
	"not xml",
}

func TestProgramOfMatchesEncodingXML(t *testing.T) {
	a := New(func(string) string { return "" }, "/Applications/My <Tools> & Co/\"mcpxd\"\t'x'")
	rendered, err := a.Render("k1", "/run/a&b/k1.sock", "/l/k1.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append(plistCorpus, string(rendered)) {
		got, gotErr := programOf(strings.NewReader(doc))
		want, wantErr := programOfXML(strings.NewReader(doc))
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("programOf(%q) = %q, %v; encoding/xml: %q, %v", doc, got, gotErr, want, wantErr)
		}
	}
	if got, err := programOf(bytes.NewReader(rendered)); err != nil || got != a.Bin {
		t.Errorf("programOf(rendered) = %q, %v; want %q", got, err, a.Bin)
	}
}

// FuzzProgramOf: whatever encoding/xml reads as a plist's program, the
// plain reader reads the same; what it cannot read, the plain reader
// reads or refuses without a panic.
func FuzzProgramOf(f *testing.F) {
	for _, doc := range plistCorpus {
		f.Add(doc)
	}
	f.Add("<plist><dict><key>ProgramArguments</key><array><")
	f.Add("<")
	f.Fuzz(func(t *testing.T, doc string) {
		want, err := programOfXML(strings.NewReader(doc))
		if err != nil {
			_, _ = programOf(strings.NewReader(doc)) // must not panic
			return
		}
		if got, err := programOf(strings.NewReader(doc)); err != nil || got != want {
			t.Errorf("programOf(%q) = %q, %v; encoding/xml: %q", doc, got, err, want)
		}
	})
}

func TestXMLEscapeMatchesEncodingXML(t *testing.T) {
	for _, s := range []string{"", "plain /path", `<a href="x">&'b'</a>`, "tab\tnl\ncr\r", "\x00\x01\x1f ok", "bad \xff utf8 \xc3", "\ufffd\ufffe\uffff", "é 日本 😀", "\U0010FFFF"} {
		var want strings.Builder
		_ = xml.EscapeText(&want, []byte(s))
		if got := xmlEscape(s); got != want.String() {
			t.Errorf("xmlEscape(%q) = %q; encoding/xml: %q", s, got, want.String())
		}
	}
}

func FuzzXMLEscape(f *testing.F) {
	f.Add("a<b>&\"'\t\n\r\x00\xff\ufffd")
	f.Fuzz(func(t *testing.T, s string) {
		var want strings.Builder
		_ = xml.EscapeText(&want, []byte(s))
		if got := xmlEscape(s); got != want.String() {
			t.Errorf("xmlEscape(%q) = %q; encoding/xml: %q", s, got, want.String())
		}
	})
}

func TestStripCommentsMatchesItsRegexp(t *testing.T) {
	comment := regexp.MustCompile(`(?s)<!--.*?-->`)
	for _, s := range []string{"", "<a/>", "x<!-- c -->y", "<!--a-->b<!--\nc\n-->d", "<!-- open", "<!-->x-->", "<!--->", "a<!--b<!--c-->d-->e"} {
		if got, want := string(stripComments([]byte(s))), string(comment.ReplaceAll([]byte(s), nil)); got != want {
			t.Errorf("stripComments(%q) = %q; regexp: %q", s, got, want)
		}
	}
}
