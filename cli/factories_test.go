package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestEveryCommandIsListed holds factories to the package: a command file
// whose xxxCommand(*App) *ucli.Command is not in the list would build a
// command nobody can run, and nothing else would say so.
func TestEveryCommandIsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range factories {
		name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
		listed[name[strings.LastIndexByte(name, '.')+1:]] = true
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset, found := token.NewFileSet(), 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isCommandFactory(fn) {
				continue
			}
			found++
			if !listed[fn.Name.Name] {
				t.Errorf("%s builds a command but is not in factories (cli/cli.go)", fn.Name.Name)
			}
		}
	}
	if found != len(factories) {
		t.Errorf("%d command factories in the package, %d listed", found, len(factories))
	}
}

// isCommandFactory reports whether fn has the shape func(*App) *ucli.Command.
func isCommandFactory(fn *ast.FuncDecl) bool {
	params, results := fn.Type.Params.List, fn.Type.Results
	if len(params) != 1 || len(params[0].Names) > 1 || results == nil || len(results.List) != 1 {
		return false
	}
	in, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	if id, ok := in.X.(*ast.Ident); !ok || id.Name != "App" {
		return false
	}
	out, ok := results.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := out.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Command"
}
