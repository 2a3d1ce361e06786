package doccheck

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moduleRoot returns the directory of go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the working directory")
		dir = parent
	}
}

// pkgDoc is the documentation of one package directory.
type pkgDoc struct {
	dir      string
	files    []*ast.File // non-test files
	doc      *doc.Package
	examples []*doc.Example // every Example function of the test files
	fset     *token.FileSet
}

// packages parses every package of the module (as go build selects its
// files for this platform) with its tests.
func packages(t *testing.T) []pkgDoc {
	t.Helper()
	root := moduleRoot(t)
	var out []pkgDoc
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		bp, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files (or only excluded ones)
		}
		fset := token.NewFileSet()
		p := pkgDoc{dir: path, fset: fset}
		var all, tests []*ast.File
		parse := func(names []string, test bool) {
			for _, n := range names {
				f, err := parser.ParseFile(fset, filepath.Join(path, n), nil, parser.ParseComments)
				require.NoError(t, err)
				all = append(all, f)
				if test {
					tests = append(tests, f)
				} else {
					p.files = append(p.files, f)
				}
			}
		}
		parse(bp.GoFiles, false)
		parse(bp.TestGoFiles, true)
		parse(bp.XTestGoFiles, true)
		rel, _ := filepath.Rel(root, path)
		p.doc, err = doc.NewFromFiles(fset, all, "example.com/"+filepath.ToSlash(rel))
		require.NoError(t, err, path)
		p.examples = doc.Examples(tests...)
		out = append(out, p)
		return nil
	})
	require.NoError(t, err)
	return out
}

// attached returns the names of the examples go/doc attached to the
// package or to one of its exported identifiers.
func attached(p *doc.Package) map[string]bool {
	seen := map[string]bool{}
	add := func(ex []*doc.Example, prefix string) {
		for _, e := range ex {
			seen["Example"+prefix+suffix(e.Suffix)] = true
		}
	}
	add(p.Examples, "")
	for _, f := range p.Funcs {
		add(f.Examples, f.Name)
	}
	for _, ty := range p.Types {
		add(ty.Examples, ty.Name)
		for _, f := range ty.Funcs {
			add(f.Examples, f.Name)
		}
		for _, m := range ty.Methods {
			add(m.Examples, ty.Name+"_"+m.Name)
		}
	}
	return seen
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return "_" + s
}

// Every Example function of the module is attached to its package or to an
// exported identifier, so documentation tools show it.
func TestExamplesAreAttached(t *testing.T) {
	total := 0
	for _, p := range packages(t) {
		seen := attached(p.doc)
		for _, e := range p.examples {
			total++
			name := "Example" + e.Name
			assert.True(t, seen[name], "%s: %s is attached to no exported identifier of package %s (name it Example, ExampleF, ExampleT or ExampleT_M, with an optional _suffix starting with a lower-case letter)",
				p.dir, name, p.doc.Name)
		}
	}
	assert.Greater(t, total, 40, "the walk found the module's examples")
}

// camel matches identifiers that are not ordinary words: an unexported name
// with an upper-case letter, a digit or an underscore after its first
// letter (chunkSize, maxLags, ns2).
var camel = regexp.MustCompile(`^[a-z][a-z]*[A-Z0-9_][A-Za-z0-9_]*$`)

// The declarations and doc comments of exported names show no unexported
// identifier of their package: a reader of the documentation cannot look it
// up.
func TestDocsShowNoUnexportedNames(t *testing.T) {
	var problems []string
	for _, p := range packages(t) {
		if p.doc.Name == "main" {
			continue // commands document flags, not identifiers
		}
		// The package-level unexported identifiers.
		unexported := map[string]bool{}
		for _, f := range p.files {
			for name, obj := range f.Scope.Objects {
				if !ast.IsExported(name) && obj.Kind != ast.Pkg && name != "_" {
					unexported[name] = true
				}
			}
		}
		report := func(where, name string) {
			problems = append(problems, p.dir+": "+where+" shows the unexported "+name)
		}
		// The values of exported constants and variables, as go doc prints
		// their declarations.
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				for _, spec := range v.Decl.Specs {
					vs := spec.(*ast.ValueSpec)
					exported := false
					for _, n := range vs.Names {
						exported = exported || n.IsExported()
					}
					if !exported {
						continue
					}
					for _, e := range vs.Values {
						ast.Inspect(e, func(n ast.Node) bool {
							if id, ok := n.(*ast.Ident); ok && unexported[id.Name] && id.Obj != nil {
								report("the value of "+vs.Names[0].Name, id.Name)
							}
							return true
						})
					}
				}
			}
		}
		// Doc comment words.
		text := func(owner, comment string) {
			for _, w := range strings.FieldsFunc(comment, func(r rune) bool {
				return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
			}) {
				if unexported[w] && camel.MatchString(w) {
					report("the doc of "+owner, w)
				}
			}
		}
		values(p.doc.Consts)
		values(p.doc.Vars)
		for _, c := range p.doc.Consts {
			text(strings.Join(c.Names, ", "), c.Doc)
		}
		for _, v := range p.doc.Vars {
			text(strings.Join(v.Names, ", "), v.Doc)
		}
		for _, f := range p.doc.Funcs {
			text(f.Name, f.Doc)
		}
		for _, ty := range p.doc.Types {
			text(ty.Name, ty.Doc)
			values(ty.Consts)
			values(ty.Vars)
			for _, f := range ty.Funcs {
				text(f.Name, f.Doc)
			}
			for _, m := range ty.Methods {
				text(ty.Name+"."+m.Name, m.Doc)
			}
		}
		text("package "+p.doc.Name, p.doc.Doc)
	}
	sort.Strings(problems)
	assert.Empty(t, problems)
}
