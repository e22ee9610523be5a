package search

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// tool is a test tool: namespace, name, description, and a definition's
// extra JSON (title, inputSchema), if any.
type tool struct{ ns, name, desc, def string }

// rankTools ranks tools as the daemon does (one index per namespace) and
// returns NS.TOOL best first.
func rankTools(tools []tool, query string, limit int) ([]string, []Hit) {
	var order []string
	byNS := map[string][]tool{}
	for _, t := range tools {
		if byNS[t.ns] == nil {
			order = append(order, t.ns)
		}
		byNS[t.ns] = append(byNS[t.ns], t)
	}
	var indexes []*Index
	for _, ns := range order {
		var docs []*Doc
		for _, t := range byNS[ns] {
			def := fmt.Sprintf(`{"name":%q,"description":%q%s}`, t.name, t.desc, t.def)
			parsed, err := ParseTool([]byte(def))
			if err != nil {
				panic(err)
			}
			docs = append(docs, NewDoc(parsed))
		}
		indexes = append(indexes, NewIndex(docs, nil))
	}
	name := func(h Hit) string { return order[h.Index] + "." + byNS[order[h.Index]][h.Doc].name }
	hits := Rank(indexes, ParseQuery(query), limit, func(a, b Hit) int { return strings.Compare(name(a), name(b)) })
	var out []string
	for _, h := range hits {
		out = append(out, name(h))
	}
	return out, hits
}

func TestRank(t *testing.T) {
	tools := []tool{
		{"b", "image", "Draws a picture.", ""},
		{"a", "paint", "An image tool with many other words in its description.", ""},
		{"a", "resizeImage", "Make smaller.", ""},
		{"c", "other", "Nothing at all.", ""},
		{"a", "picture", "Unrelated.", ""},
		{"d", "image", "Draws a picture.", ""},
	}
	// A word in the name ranks over one in the description; equal scores
	// sort by namespace.tool; camelCase names are split; the word itself
	// ranks over a synonym (picture).
	got, _ := rankTools(tools, "Image", 0)
	if want := []string{"b.image", "d.image", "a.resizeImage", "a.picture", "a.paint"}; !reflect.DeepEqual(got, want) {
		t.Errorf("image = %v, want %v", got, want)
	}
	// A plural is stemmed (a plural query covers names that end in the
	// singular a little less: TestRankNumber).
	if got, _ := rankTools(tools, "Images", 0); len(got) != 5 || got[0] != "b.image" || !slices.Contains(got, "a.resizeImage") {
		t.Errorf("images = %v", got)
	}
	// Common words match nothing.
	if got, _ := rankTools(tools, "a the of", 0); len(got) != 0 {
		t.Errorf("stop words matched %v", got)
	}
	if got, _ := rankTools(tools, "image", 2); len(got) != 2 {
		t.Errorf("limit 2 gave %v", got)
	}
	// Titles, parameter names, parameter descriptions and enum values
	// count; the name more than any.
	withParams := []tool{
		{"x", "one", "Does one thing.", `,"title":"Weather Forecast","inputSchema":{"properties":{"city":{"description":"where it rains"},"units":{"enum":["celsius","fahrenheit"]}}}`},
		{"x", "two", "Does another thing.", ""},
	}
	for _, q := range []string{"city", "forecasts", "rains", "celsius"} {
		if got, _ := rankTools(withParams, q, 0); !reflect.DeepEqual(got, []string{"x.one"}) {
			t.Errorf("%s: %v", q, got)
		}
	}
}

// The thesaurus finds what the tools' own words do not say, below the
// word itself.
func TestRankThesaurus(t *testing.T) {
	tools := []tool{
		{"gh", "create_issue", "Create a new issue in a GitHub repository", ""},
		{"gh", "list_issues", "List issues in a GitHub repository", ""},
		{"gh", "delete_branch", "Delete a branch", ""},
		{"k", "kubectl_get", "Get or list Kubernetes resources", ""},
		{"t", "ticket_stats", "Statistics of tickets sold", ""},
	}
	for _, c := range []struct{ q, want string }{
		{"open a ticket in the repo", "gh.create_issue"},
		{"show k8s resources", "k.kubectl_get"},
		{"erase a branch", "gh.delete_branch"},
		{"enumerate issues", "gh.list_issues"},
		{"ticket stats", "t.ticket_stats"}, // the word itself beats its synonym
	} {
		if got, _ := rankTools(tools, c.q, 3); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
}

// Among tools that all mention the query's words, the one whose name they
// cover wins.
func TestRankNameDecides(t *testing.T) {
	tools := []tool{
		{"m", "read_graph", "Read the entire knowledge graph", ""},
		{"m", "search_nodes", "Search for nodes in the knowledge graph based on a query", ""},
		{"m", "delete_entities", "Delete multiple entities and their associated relations from the knowledge graph", ""},
		{"m", "delete_relations", "Delete multiple relations from the knowledge graph", ""},
	}
	for _, c := range []struct{ q, want string }{
		{"knowledge graph", "m.read_graph"},
		{"delete relations from the knowledge graph", "m.delete_relations"},
	} {
		if got, _ := rankTools(tools, c.q, 0); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
}

// A word that says a thing's state (a past participle, "open") after the
// request's first word matches, but does not cover a name's verb: the
// merged pull requests are listed, not merged; the open issues listed,
// not opened. It still covers the same word as a name's object: what was
// committed is list_commits' (its verb is list), not push_files'.
func TestRankState(t *testing.T) {
	tools := []tool{
		{"gh", "merge_pull_request", "Merge a pull request", ""},
		{"gh", "list_pull_requests", "List pull requests, by state: open, closed or merged", ""},
		{"m", "open_nodes", "Open nodes of the graph by their names", ""},
		{"gh", "list_issues", "List the issues of a repository, by state: open or closed", ""},
	}
	for _, c := range []struct{ q, want string }{
		{"show the merged pull requests", "gh.list_pull_requests"},
		{"which issues are still open", "gh.list_issues"},
		{"merge the pull request", "gh.merge_pull_request"},
		{"open the nodes named Alice", "m.open_nodes"},
	} {
		if got, _ := rankTools(tools, c.q, 0); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
	// The state covers the word where it is a name's object as much as the
	// word itself would (list_commits, whose verb is list), not where it
	// is its verb (merge_pull_request).
	score := func(name, q string) float64 {
		_, hits := rankTools([]tool{{"gh", name, "", ""}}, q, 0)
		if len(hits) != 1 {
			t.Fatalf("%s for %q: %+v", name, q, hits)
		}
		return hits[0].Score
	}
	if state, word := score("list_commits", "the committed"), score("list_commits", "the commits"); state != word {
		t.Errorf("list_commits: %v for a state, %v for the word", state, word)
	}
	if state, word := score("merge_pull_request", "the merged"), score("merge_pull_request", "the merges"); state >= word {
		t.Errorf("merge_pull_request: %v for a state, %v for the word", state, word)
	}
	for q, want := range map[string]bool{
		"merged": false, "the merged PRs": true, "is it open": true, "open it": false, "need": false,
		"open bugs in acme/api": true, "merged PRs": true, "open the file": false, "open several files": false, "open a PR": false,
		"- open the file": false, "... merged PRs": true, "* open bugs": true,
	} {
		pq := ParseQuery(q)
		if got := slices.ContainsFunc(pq.concepts, func(c concept) bool { return c.state }); got != want {
			t.Errorf("%q: a state %v, want %v", q, got, want)
		}
	}
}

// A plural covers a name that ends in its singular less than one that
// ends in its plural: the PRs are listed, the PR is got. A word in a
// name's middle (a modifier: pull_request_reviews) says nothing of number.
// The rule alone, with the learned bridge off: the bridge's keys are
// stems and know no number, and what it learned of "pr" from singular
// requests ("PR 45" → get) outweighs the rule on two tools.
func TestRankNumber(t *testing.T) {
	defer setBridge(bridgeTable{})()
	tools := []tool{
		{"gh", "get_pull_request", "Get the details of a pull request", ""},
		{"gh", "list_pull_requests", "List the pull requests of a repository", ""},
	}
	for _, c := range []struct{ q, want string }{
		{"PRs on acme/web", "gh.list_pull_requests"},
		{"pull requests waiting on acme/web", "gh.list_pull_requests"},
		{"PR 45 on acme/web", "gh.get_pull_request"},
	} {
		if got, _ := rankTools(tools, c.q, 0); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
	single := func(name string) []string {
		d := NewDoc(Tool{Name: name})
		var out []string
		for k, term := range d.terms {
			if d.isSingle(k) {
				out = append(out, term.term)
			}
		}
		return out
	}
	if got := single("get_pull_request_reviews"); got != nil {
		t.Errorf("get_pull_request_reviews: singular last word %v", got)
	}
	if got := single("get_pull_request"); !reflect.DeepEqual(got, []string{"pull request", "request"}) {
		t.Errorf("get_pull_request: singular last word %v", got)
	}
	// A name's verb is its first word that names an action.
	for name, want := range map[string]string{"list_commits": "list", "merge_pull_request": "merg", "browser_close": "close", "get_file_info": "get", "sequentialthinking": ""} {
		d, got := NewDoc(Tool{Name: name}), ""
		if d.verb >= 0 {
			got = d.terms[d.verb].term
		}
		if got != want {
			t.Errorf("%s: verb %q, want %q", name, got, want)
		}
	}
}

// Why names each matched query word, what it matched through, and where.
// A tool that converts one thing into another is found for what it
// gives, not for what it takes: the query's own words are what it wants,
// its values and the words after a preposition what it gives.
func TestRankConversion(t *testing.T) {
	tools := []tool{
		{"maps", "geocode", "Convert an address into geographic coordinates", `,"inputSchema":{"properties":{"address":{"type":"string"}}}`},
		{"maps", "reverse_geocode", "Convert coordinates into an address", `,"inputSchema":{"properties":{"latitude":{"type":"number","description":"Latitude coordinate"}}}`},
	}
	for _, c := range []struct{ q, want string }{
		{"coordinates of the Brandenburg Gate", "maps.geocode"},
		{"coords for 1600 Amphitheatre Parkway", "maps.geocode"},
		{"address for these coordinates", "maps.reverse_geocode"},
		{"the address at 40.71,-74.01", "maps.reverse_geocode"},
	} {
		if got, _ := rankTools(tools, c.q, 0); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
	// A word that lands on the wrong side of a tool's conversion counts
	// only there: its bridge words, which name the tool, do not undo it.
	defer setBridge(bridgeTable{"address": {{"geocod", "geocode", 1}}})()
	if got, _ := rankTools(tools, "address for these coordinates", 0); len(got) == 0 || got[0] != "maps.reverse_geocode" {
		t.Errorf("with a bridge from address to geocode: %v, want maps.reverse_geocode first", got)
	}
}

func TestConversion(t *testing.T) {
	for desc, want := range map[string][2]string{
		"Convert an address into geographic coordinates":      {"address", "coordin"},
		"Convert coordinates into an address":                 {"coordin", "address"},
		"Searches places. Translates a text to French, fast.": {"text", "french"},
		"Transforms Markdown into HTML, keeping links":        {"markdown", "html"},
		"Type text into editable element":                     {"", ""}, // no conversion
		"Convert into":                                        {"", ""},
		"Returns the sum of two numbers":                      {"", ""},
	} {
		if from, into := conversion(desc); from != want[0] || into != want[1] {
			t.Errorf("conversion(%q) = %q, %q, want %q", desc, from, into, want)
		}
	}
}

// TestRankWhy: each word's match names the thesaurus entry it went
// through and the fields. With the bridge off: TestBridgeMatch has the
// why of a learned word, and what the bridge learns changes.
func TestRankWhy(t *testing.T) {
	defer setBridge(bridgeTable{})()
	tools := []tool{{"gh", "create_issue", "Create a new issue in a GitHub repository",
		`,"inputSchema":{"properties":{"labels":{"description":"Labels to add"}}}`}}
	_, hits := rankTools(tools, "open a ticket with labels in the repo", 1)
	if len(hits) != 1 {
		t.Fatalf("hits: %v", hits)
	}
	want := []Match{
		{Word: "open", Via: "create", Fields: []Field{FieldName, FieldDescription}},
		{Word: "ticket", Via: "issue", Fields: []Field{FieldName, FieldDescription}},
		{Word: "labels", Fields: []Field{FieldParam, FieldParamDesc}},
		{Word: "repo", Via: "repository", Fields: []Field{FieldDescription}},
	}
	if !reflect.DeepEqual(hits[0].Why, want) {
		t.Errorf("why = %+v\nwant %+v", hits[0].Why, want)
	}
}

// A limit keeps the best hits of the whole ranking, in its order.
func TestRankLimitIsTopOfRanking(t *testing.T) {
	var tools []tool
	for i := range 60 {
		ns := []string{"a", "a-", "ab", "b"}[i%4]
		desc := strings.Repeat("filler ", i%7) + "image"
		if i%5 == 0 {
			desc = "picture"
		}
		tools = append(tools, tool{ns, fmt.Sprintf("t%02d", i%9), desc, ""})
	}
	all, _ := rankTools(tools, "image picture", 0)
	if len(all) != len(tools) {
		t.Fatalf("every tool matches one of the words: %d of %d", len(all), len(tools))
	}
	for _, limit := range []int{1, 2, 7, 10, 59, 60, 100} {
		got, _ := rankTools(tools, "image picture", limit)
		if want := all[:min(limit, len(all))]; !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d = %v, want %v", limit, got, want)
		}
	}
}

// The server's instructions are a field every tool of the server shares.
func TestRankInstructions(t *testing.T) {
	docs := []*Doc{NewDoc(Tool{Name: "run", Description: "Run it."}), NewDoc(Tool{Name: "stop", Description: "Stop it."})}
	other := []*Doc{NewDoc(Tool{Name: "run", Description: "Run something else."})}
	indexes := []*Index{NewIndex(docs, NewServerDoc(Server{Instructions: "Tools of the Acme build farm."})), NewIndex(other, nil)}
	hits := Rank(indexes, ParseQuery("run acme"), 0, func(a, b Hit) int { return a.Index - b.Index })
	if len(hits) != 3 || hits[0].Index != 0 || hits[0].Doc != 0 {
		t.Fatalf("hits: %+v", hits)
	}
	if !slices.ContainsFunc(hits[0].Why, func(m Match) bool { return m.Word == "acme" && slices.Equal(m.Fields, []Field{FieldInstructions}) }) {
		t.Errorf("why: %+v", hits[0].Why)
	}
}

// The server's own name is a field every tool of the server shares, without
// the words that only say it is a server: "memory" finds the tools of
// memory-server, whose names and descriptions never say it.
func TestRankServerName(t *testing.T) {
	memory := []*Doc{NewDoc(Tool{Name: "create_entities", Description: "Create entities in the knowledge graph"})}
	files := []*Doc{NewDoc(Tool{Name: "write_file", Description: "Create a new file"})}
	indexes := []*Index{
		NewIndex(files, NewServerDoc(Server{Name: "secure-filesystem-server"})),
		NewIndex(memory, NewServerDoc(Server{Name: "memory-server", Title: "Memory MCP Server"})),
	}
	hits := Rank(indexes, ParseQuery("create something in memory"), 0, func(a, b Hit) int { return a.Index - b.Index })
	if len(hits) != 2 || hits[0].Index != 1 {
		t.Fatalf("hits: %+v", hits)
	}
	if !slices.ContainsFunc(hits[0].Why, func(m Match) bool { return m.Word == "memory" && slices.Equal(m.Fields, []Field{FieldServer}) }) {
		t.Errorf("why: %+v", hits[0].Why)
	}
	// "server" is in both names and says nothing: no tool matches it.
	if hits := Rank(indexes, ParseQuery("server"), 0, func(a, b Hit) int { return a.Index - b.Index }); len(hits) != 0 {
		t.Errorf("server matched %+v", hits)
	}
	if NewServerDoc(Server{Name: "example-servers/mcp-server"}) != nil {
		t.Error("a server whose name says only that it is a server has a document")
	}
}

// A query that names a server (a word of its own name no other server's
// tool has in its name) prefers its tools to another server's whose name
// the query's common words cover; a word some other tool's name has
// ("search" of brave-search) names no server, nor does a topic's word.
func TestRankNamedServer(t *testing.T) {
	memory := []*Doc{
		NewDoc(Tool{Name: "add_observations", Description: "Add observations to entities"}),
		NewDoc(Tool{Name: "search_nodes", Description: "Search for nodes"}),
	}
	notion := []*Doc{NewDoc(Tool{Name: "API-post-page", Description: "Notion | Create a page"})}
	brave := []*Doc{NewDoc(Tool{Name: "brave_web_search", Description: "Search the web"})}
	kube := []*Doc{NewDoc(Tool{Name: "kubectl_get", Description: "Get resources"})}
	everything := []*Doc{NewDoc(Tool{Name: "echo", Description: "Echoes back the input"})}
	indexes := []*Index{
		NewIndex(memory, NewServerDoc(Server{Name: "memory-server"})),
		NewIndex(notion, NewServerDoc(Server{Name: "Notion API"})),
		NewIndex(brave, NewServerDoc(Server{Name: "example-servers/brave-search"})),
		NewIndex(kube, NewServerDoc(Server{Name: "kubernetes"})),
		NewIndex(everything, NewServerDoc(Server{Name: "example-servers/everything"})),
	}
	tie := func(a, b Hit) int { return a.Index - b.Index }
	hits := Rank(indexes, ParseQuery("add a new page under Projects in notion"), 0, tie)
	if len(hits) < 2 || hits[0].Index != 1 {
		t.Fatalf("hits: %+v", hits)
	}
	for q, want := range map[string][]bool{
		"add a new page in notion":             {true, false, true, true, true},
		"add a page in the memory":             {false, true, true, true, true},
		"search the web":                       nil,                             // "search" is a tool's name word too
		"search memory for notes about notion": {false, true, true, true, true}, // a topic
		"search memory for notes in notion":    {false, false, true, true, true},
		"list the pods in k8s":                 {true, true, true, false, true}, // an equivalent, in context
		"add an observation":                   nil,
		"dump everything you remember":         nil, // a pronoun, never the name of server-everything (whose tools still match it in their server's name)
	} {
		if got := namedServers(indexes, ParseQuery(q)); !slices.Equal(got, want) {
			t.Errorf("namedServers(%q) = %v, want %v", q, got, want)
		}
	}
}

// A request that names no action wants to look, as a question does: the
// tool that reads block children before the one that adds some. One that
// starts with a verb, or has a word for a tool's action, acts.
func TestRankLook(t *testing.T) {
	docs := []*Doc{
		NewDoc(Tool{Name: "add_block_children", Description: "Add block children"}),
		NewDoc(Tool{Name: "get_block_children", Description: "Retrieve block children"}),
	}
	indexes := []*Index{NewIndex(docs, nil)}
	tie := func(a, b Hit) int { return a.Doc - b.Doc }
	for q, want := range map[string]int{
		"child blocks of block abc":        1,
		"add child blocks to block abc":    0,
		"insert child blocks in block abc": 0,
	} {
		if hits := Rank(indexes, ParseQuery(q), 0, tie); len(hits) != 2 || hits[0].Doc != want {
			t.Errorf("%q: %+v", q, hits)
		}
	}
	for q, look := range map[string]bool{
		"child blocks of notion block abc":      true,
		"tasks in the notion database due soon": true, // a plural noun: a request's verb is in its base form
		"gitlab projects named payments":        true,
		"approve the PR":                        false, // a verb first
		"draft a meeting-notes doc":             false,
		"please comment on the doc":             false, // after the request's frame
		"a new page under Projects":             false, // new stands for create
		"set up a database":                     false, // a phrasal verb
		"which pods are failing":                false, // a question: questionPenalty instead
	} {
		if got := ParseQuery(q).look; got != look {
			t.Errorf("ParseQuery(%q).look = %v, want %v", q, got, look)
		}
	}
}

func TestParseQuery(t *testing.T) {
	describe := func(q Query) []string {
		var out []string
		for _, c := range q.concepts {
			if c.pair {
				continue // what the bridge learned of two words (TestBridgePairs)
			}
			s := c.word + "=" + c.alts[0].term
			if c.alts[0].weight != 1 {
				s += fmt.Sprintf("@%.2g", c.alts[0].weight)
			}
			out = append(out, s)
		}
		return out
	}
	for q, want := range map[string][]string{
		// Phrases the thesaurus knows are one concept; repeats count once.
		"merge the pull request, the pull request!": {"merge=merg", "pull request=pull request"},
		// Values say what kind of thing the tool works on; their own words
		// count little.
		"save it to notes.md":      {"save=save", "notes=note@0.23", "md=md@0.23", "notes.md=file"},
		"open https://example.com": {"open=open", "https=http@0.25", "example=exampl@0.25", "com=com@0.25", "https://example.com=url"},
		"find *.go under src/":     {"find=find", "go=go@0.25", "src=src@0.23", "*.go=pattern", "src/=directori"},
		// Words after a preposition say where, not what.
		"list pods in the namespace": {"list=list", "pods=pod", "namespace=namespac@0.9"},
		// Words after "about", "named"… are what the tool looks for, not the
		// tool: they count less than words after another preposition,
		// until the clause ends.
		"search memory for notes about the k8s upgrade": {"search=search", "memory=memori", "notes=note@0.9", "k8s=k8s@0.4", "upgrade=upgrad@0.4"},
		"find the page titled Roadmap, then archive it": {"find=find", "page=page", "titled=titl", "roadmap=roadmap@0.4", "archive=archiv"},
		// A cue: a common word that points to what is asked for.
		"when was it changed": {"changed=chang", "when=when@0"},
		// A verb and its particle: only its thesaurus entries count; the
		// words after a particle that is a preposition say where.
		"set up a database":             {"set up=set up@0", "database=databas"},
		"pharmacies close to the hotel": {"pharmacies=pharmaci", "close to=close to@0", "hotel=hotel@0.9"},
		// A value's kind is a term as documents index it; a latitude and
		// longitude, an emoji are values too.
		"reverse geocode 40.7,-74.0 and react :eyes:": {"reverse=revers", "geocode=geocod", "40=40@0.25", "7=7@0.25", "74=74@0.25", "0=0@0.25", "react=react", "eyes=ey@0.25", "40.7,-74.0=coordin", ":eyes:=emoji"},
		"elevation at 39.74, -104.99":                 {"elevation=elev", "39=39@0.23", "74=74@0.23", "104=104@0.25", "99=99@0.25", "39.74,=coordin"},
		"what street is at 40.75, -73.98?":            {"street=street", "40=40@0.23", "75=75@0.23", "73=73@0.25", "98=98@0.25", "40.75,=coordin"},
		// A statement of SQL is a value: its words name tables, its kind the tool.
		"run SELECT name FROM users": {"run=run", "select=select@0.25", "name=name@0.25", "users=user@0.25", "select name from users=sql"},
		// A key's value is an argument, as a number is.
		"label ns dev team=platform": {"label=label", "ns=ns", "dev=dev", "team=team@0.25", "platform=platform@0.25"},
		// A + between numbers is the word plus.
		"what's 19 + 23": {"19=19@0.25", "plus=plu", "23=23@0.25"},
		"cpu + memory":   {"cpu=cpu", "memory=memori"},
		// Quoted text is what the tool is to type, find or write.
		`trash the notion page "Old meeting notes"`: {"trash=trash", "notion=notion", "page=page", "old=old@0.25", "meeting=meet@0.25", "notes=note@0.25"},
		`save it to "notes.md"`:                     {"save=save", "notes=note@0.23", "md=md@0.23", "\"notes.md\"=file"},
		// So is code quoted in backticks: its words name its own things.
		"where is `func NewRouter` defined": {"func=func@0.25", "new=new@0.25", "router=router@0.25", "newrouter=newrout@0.25", "defined=defin", "where=where@0", "func newrouter=code"},
	} {
		if got := describe(ParseQuery(q)); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseQuery(%q) = %q, want %q", q, got, want)
		}
	}
	if !ParseQuery("the of a").Empty() || ParseQuery("file").Empty() {
		t.Error("Empty")
	}
}

func TestShapeOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/x": "url", "www.go.dev": "url", "localhost:3000": "url", "example.com": "url",
		"notes.md": "file", "main.py,": "file", "/etc/hosts": "file", "./run": "file", "README": "file", ".env": "file",
		"src/": "directory", "*.go": "pattern", "@alice": "user", "#general": "channel",
		"lat/long": "", "e.g.": "", "v1.2": "", "hello": "", "x": "", "count(*)": "", "40.7128,-74.0060": "coordinates", "1.5": "", ":+1:": "emoji", "::": "", "👀": "emoji", "👍🏽": "emoji", "✅": "emoji", "→": "", "©": "", "a👀": "", "OPENAI_API_KEY": "environment", "$HOME": "environment", "HTTP": "", "read_file": "",
		"a.go": "file", "c.go's": "file", "x.com": "url", ".md": "", ".gz": "", "acme/api#77": "issue", "acme/api#": "", "#12": "issue", "#": "", "#12a": "channel", "PATH": "environment", "path": "",
		"jane@x.io": "email", "ops@example.com,": "email", "a@b": "",
		"C024BE91L": "channel", "C0456DEF,": "channel", "U024BE7LH": "user", "CONTRIBUTING": "", "C1234567": "", "c024be91l": "", "CHANGELOG.md": "file",
		"document.title": "javascript", "window.scrollTo(0,": "javascript", "localStorage.getItem('k')": "javascript", "history.md": "file", "document.pdf": "file", "window.png": "file", "navigator.userAgent": "javascript",
		"db/migrations": "directory", "build/reports/coverage": "directory", "acme/api": "", "deploy/checkout": "", "docs/adr/0007-cache.md": "file", "kubernetes/kubernetes": "",
	} {
		if got := shapeOf(in); got != want {
			t.Errorf("shapeOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSQLStatement(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT count(*) FROM orders":                  "SELECT count(*) FROM orders",
		"please run select * from users where id = 3":  "select * from users where id = 3",
		"INSERT INTO logs VALUES (1)":                  "INSERT INTO logs VALUES (1)",
		"select the last ten orders from the database": "", // English
		"delete the pod from the cluster":              "",
		"update the issue":                             "",
		"UPDATE users SET name = 'x'":                  "UPDATE users SET name = 'x'",
		"EXPLAIN ANALYZE SELECT * FROM events":         "EXPLAIN ANALYZE SELECT * FROM events",
		"explain select * from t":                      "select * from t",
		"CREATE TABLE t (id int)":                      "CREATE TABLE t (id int)",
		// Keys and values are no SQL without the keywords it needs.
		"create a configmap with the pairs A=1 and B=2": "",
		"select the rows from PROD where x=1":           "select the rows from PROD where x=1",
	} {
		fields := strings.Fields(q)
		from, to := sqlStatement(fields)
		if got := strings.Join(fields[from:to], " "); got != want {
			t.Errorf("sqlStatement(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	for q, want := range map[string]string{
		"where is `func NewRouter` defined":          "`func NewRouter`",
		"run `document.title`, then screenshot":      "`document.title`,",
		"execute `window.location.href` in the page": "`window.location.href`",
		"an unclosed `quote here":                    "",
		"a lone ` mark":                              "",
		"empty `` quotes":                            "",
		"spaced ` ` quotes":                          "",
		"`` then `real code`":                        "`real code`",
		"no code at all":                             "",
	} {
		fields := strings.Fields(q)
		from, to := codeSpan(fields)
		if got := strings.Join(fields[from:to], " "); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestIsAssignment(t *testing.T) {
	for w, want := range map[string]bool{
		"team=platform": true, "log_level=debug": true, "--replicas=3": true, "n=4": true,
		"a=b=c": false, "=x": false, "x=": false, "==": false, "priority": false, "count(*)=1": false,
	} {
		if got := isAssignment(w); got != want {
			t.Errorf("isAssignment(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestQuoteEnd(t *testing.T) {
	for q, want := range map[string]string{
		`tap the "Accept cookies" button`:       `"Accept cookies"`,
		`type 'hello world', then enter`:        `'hello world',`,
		`wait until “Saved” shows`:              `“Saved”`,
		`commit msg "rename"`:                   `"rename"`,
		`an unclosed "quote here`:               ``,
		`don't touch the users' files`:          ``,
		`a lone " mark`:                         ``,
		`empty "" quotes`:                       `""`,
		`mixed "quotes' never close`:            ``,
		`"Runbook: DB failover" under the wiki`: `"Runbook: DB failover"`,
	} {
		fields := strings.Fields(q)
		got := ""
		for i := range fields {
			if end := quoteEnd(fields, i); end > i {
				got = strings.Join(fields[i:end], " ")
				break
			}
		}
		if got != want {
			t.Errorf("quoteEnd(%q) = %q, want %q", q, got, want)
		}
	}
}

// isWriteVerb knows the verbs by their stems, as names are indexed.
func TestIsWriteVerb(t *testing.T) {
	for _, w := range []string{"create", "creates", "generate", "register", "delete", "remove", "erase", "destroy",
		"purge", "uninstall", "update", "modify", "change", "rename", "upgrade", "scale", "toggle", "merge",
		"copy", "reply", "install", "apply", "deploy", "archive", "post", "push", "send"} {
		if !isWriteVerb(stem(w)) {
			t.Errorf("%s (%s) is not a write verb", w, stem(w))
		}
	}
	for _, w := range []string{"get", "list", "read", "search", "describe", "find", "query", "retrieve"} {
		if isWriteVerb(stem(w)) {
			t.Errorf("%s is a write verb", w)
		}
	}
}

// A question wants to look: a tool that changes something comes after one
// that reads even when the question names its verb.
func TestRankQuestionsLook(t *testing.T) {
	tools := []tool{
		{"chat", "post_message", "Post a message to a channel", ""},
		{"chat", "list_channels", "List the channels you can post to", ""},
	}
	for _, c := range []struct{ q, want string }{
		{"which channels can I post in", "chat.list_channels"},
		{"post in the channel", "chat.post_message"},
		{"post a message to the channel", "chat.post_message"},
		{"what channels are there to post to?", "chat.list_channels"},
	} {
		if got, _ := rankTools(tools, c.q, 0); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
}

func TestIsQuestion(t *testing.T) {
	for q, want := range map[string]bool{
		"which pods are crashing": true, "is the build green": true, "when was it created": true,
		"What’s in the repo": true, "the pods, are they up?": true, "how many rows": true,
		"can you create a branch": false, "how do I delete a tag": false, "create a branch": false,
		"list pods": false, "could you tell me whether CI passed?": false,
	} {
		if got := isQuestion(strings.Fields(q)); got != want {
			t.Errorf("isQuestion(%q) = %v, want %v", q, got, want)
		}
	}
	// Without its request frame, a request for an answer is a question.
	if q := ParseQuery("could you tell me whether CI passed?"); !q.question {
		t.Error("a framed question is not one")
	}
}

func TestWithoutFrames(t *testing.T) {
	for in, want := range map[string]string{
		"Can you please create a branch for me":  "create a branch",
		"I need to go ahead and delete the pod.": "delete the pod.",
		"tell me which pods are crashing":        "which pods are crashing",
		"tell the team the deploy is done":       "tell the team the deploy is done",
		"make sure the service exists for me.":   "the service exists.",
		"make a branch":                          "make a branch",
	} {
		if got := strings.Join(withoutFrames(strings.Fields(in)), " "); got != want {
			t.Errorf("withoutFrames(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWithoutBefore: the verb of a leading "before I …" clause is the
// agent's next step, not its request; the clause's object stays.
func TestWithoutBefore(t *testing.T) {
	for in, want := range map[string]string{
		"before I delete anything, tell me the current context": "anything, tell me the current context",
		"before I touch PR 77: its author":                      "PR 77: its author",
		"before we start: what do you know":                     "before we start: what do you know",
		"before touching the schema, reason about it":           "before touching the schema, reason about it",
		"delete it before I go":                                 "delete it before I go",
	} {
		if got := strings.Join(withoutBefore(strings.Fields(in)), " "); got != want {
			t.Errorf("withoutBefore(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDistance: a distance is a value, how far to search, whether written
// in one word or two; a number of minutes or millicores is not one.
func TestDistance(t *testing.T) {
	for q, want := range map[string]bool{
		"coffee within 1km of 37.77,-122.41":      true,
		"ramen within 1500 m of 35.6595,139.7005": true,
		"bars in 2.5mi of the hotel":              true,
		"logs of the last 10m":                    false,
		"limit the pod to 500m cpu":               false,
		"the last 3 messages":                     false,
	} {
		got := slices.ContainsFunc(ParseQuery(q).concepts, func(c concept) bool { return c.kind == "radius" })
		if got != want {
			t.Errorf("%q: a distance %v, want %v", q, got, want)
		}
	}
}

// TestIssueRefIsPullRequestToo: owner/repo#N numbers an issue or a pull
// request, so the request's other words decide which.
func TestIssueRefIsPullRequestToo(t *testing.T) {
	tools := []string{
		`{"name":"get_issue","description":"Get details of a specific issue in a GitHub repository"}`,
		`{"name":"get_pull_request_files","description":"Get the list of files changed in a pull request"}`,
	}
	var docs []*Doc
	for _, raw := range tools {
		tool, err := ParseTool([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, NewDoc(tool))
	}
	ix := NewIndex(docs, nil)
	for q, want := range map[string]int{"which files did pallets/flask#9012 touch": 1, "details of acme/api#12": 0} {
		hits := Rank([]*Index{ix}, ParseQuery(q), 10, func(a, b Hit) int { return a.Doc - b.Doc })
		if len(hits) == 0 || hits[0].Doc != want {
			t.Errorf("%q: got %+v, want tool %d first", q, hits, want)
		}
	}
}

// TestSearchQualifier: a code host's search syntax typed as the request
// says what is searched; other key:value words are not it.
func TestSearchQualifier(t *testing.T) {
	for f, want := range map[string]string{
		"is:pr": "pull request", "is:open": "issu", "review-requested:@me": "issu", "extension:yml": "code",
		"in:file": "code", "topic:cli": "repositori", "location:berlin": "user", "org:acme": "",
	} {
		if got, ok := searchQualifier(f); !ok || got != want {
			t.Errorf("searchQualifier(%q) = %q, %v; want %q, true", f, got, ok, want)
		}
	}
	for _, f := range []string{"https://x.io", "localhost:3000", "team=platform", "is:", "note:", "label:bug"} {
		if got, ok := searchQualifier(f); ok {
			t.Errorf("searchQualifier(%q) = %q, true; want none", f, got)
		}
	}
	q := ParseQuery("is:pr is:open review-requested:@me")
	if !slices.ContainsFunc(q.concepts, func(c concept) bool { return c.kind == "search" && c.alts[0].term == "pull request" }) {
		t.Errorf("is:pr is:open review-requested:@me: %+v, want a search of pull requests", q.concepts)
	}
}

// TestLengthPrior: a server of one tool is measured against a typical
// tool's length too (lengthPrior), so its one long description does not
// outrank a short one that says the word once, just because no other
// tool of its server is there to be long against.
func TestLengthPrior(t *testing.T) {
	long := "A detailed tool for dynamic and reflective problem-solving through thoughts. " +
		strings.Repeat("Each thought can build on, question, or revise previous insights as understanding deepens. ", 12) +
		"It can also verify a checksum when a thought needs one, and compare a checksum against a hypothesis."
	tools := []tool{
		{"thinking", "think", long, ""},
		{"hasher", "digest", "Computes the checksum of a file.", ""},
	}
	got, _ := rankTools(tools, "checksum", 0)
	if len(got) != 2 || got[0] != "hasher.digest" {
		t.Errorf("got %v, want hasher.digest first: the long description's two mentions are in a text thirty times as long", got)
	}
	keep := lengthPrior
	lengthPrior = 0
	defer func() { lengthPrior = keep }()
	if got, _ := rankTools(tools, "checksum", 0); len(got) != 2 || got[0] != "thinking.think" {
		t.Errorf("without the prior: %v, want thinking.think first (each server alone, its length never counts)", got)
	}
}
