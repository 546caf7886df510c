package symbols

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decls is what Declarations finds, one "Kind Recv.Name @Line-End" a line.
func decls(file, src string) []string {
	var out []string
	for _, d := range Declarations(file, []byte(src)) {
		out = append(out, fmt.Sprintf("%s %s @%d-%d", d.Kind, d.Qualified(), d.Line, d.End))
	}
	return out
}

func TestDeclarations(t *testing.T) {
	for _, tt := range []struct {
		name, file, src string
		want            []string
	}{
		{"go by its parser", "a.go", "package a\n\nconst X = 1\n\ntype T struct{}\n\nfunc (t *T) M() {\n}\n\nvar v, w int\n",
			[]string{"const X @3-3", "type T @5-5", "method T.M @7-8", "var v @10-10", "var w @10-10"}},
		{"go that does not parse", "a.go", "package a\nfunc (", nil},
		{"another language", "a.rb", "def hello\nend\n", nil},

		{"python decorators and methods", "m.py", "@dataclass\nclass Point:\n    x: int = 0\n\n    @staticmethod\n    def origin():\n        return Point()\n\ndef dist(a, b):\n    return 0\n",
			[]string{"class Point @2-7", "method Point.origin @6-7", "func dist @9-10"}},
		{"python nested defs and classes", "m.py", "def outer():\n    def inner():\n        pass\n    class Local:\n        def m(self): pass\n\nclass A:\n    class B:\n        def m(self): pass\n    def n(self): pass\n",
			[]string{"func outer @1-5", "class A @7-10", "class B @8-9", "method B.m @9-9", "method A.n @10-10"}},
		{"python strings and comments", "m.py", "s = '''\ndef fake():\n'''\n# def fake2(): pass\nt = \"class Fake:\" # x\nu = r'\\'' ; v = 1\ndef real(): pass\n",
			[]string{"var s @1-1", "var t @5-5", "var u @6-6", "func real @7-7"}},
		{"python continuation lines", "m.py", "x = call(\n    def_=1,\n)\ny = 2 + \\\n    3\nasync def go(\n  a,\n):\n    pass\n",
			[]string{"var x @1-1", "var y @4-4", "func go @6-9"}},
		{"python constants and non-assignments", "m.py", "MAX_SIZE = 10\nname: str\nif x == 1:\n    Y = 2\nprint(1)\nz += 1\ntype Alias = list[int]\n",
			[]string{"const MAX_SIZE @1-1", "var name @2-2", "type Alias @7-7"}},
		{"python continuation at column 0", "m.py", "class A:\n    X = 1 + \\\n2\n    def m(self): pass\n",
			[]string{"class A @1-4", "method A.m @4-4"}},
		{"python tabs", "m.py", "class A:\n\tdef m(self):\n\t\tpass\n\tdef n(self): pass\n",
			[]string{"class A @1-4", "method A.m @2-3", "method A.n @4-4"}},

		{"js exports and classes", "a.js", "export default function main() {\n  return 1;\n}\nexport class Box extends Base {\n  static of(x) { return new Box(x); }\n  #secret() {}\n  async *items() {}\n  get width() { return 1 }\n  if (x) {}\n}\n",
			[]string{"func main @1-3", "class Box @4-10", "method Box.of @5-5", "method Box.secret @6-6", "method Box.items @7-7", "method Box.width @8-8"}},
		{"js comments, strings, templates and regexps", "a.js", "const a = \"{ function fake() {\";\n/* class Fake {\n} */\nconst re = /[{'\"]/;\nconst t = `${ { b: `}` } }`;\nfunction real() {}\n",
			[]string{"const a @1-1", "const re @4-4", "const t @5-5", "func real @6-6"}},
		{"js object literals and calls are not classes", "a.js", "const api = {\n  get(x) { return x; },\n};\ndescribe(\"x\", () => {\n  function inner() {}\n});\nlet n = 1, m = 2\n",
			[]string{"const api @1-3", "let n @7-7"}},
		{"ts declarations", "a.ts", "export interface Shape {\n  area(): number;\n}\nexport type Id = string;\ndeclare const enum Color { Red }\nexport abstract class Base<T> {\n  protected abstract size(): number;\n  public readonly handle = async (e: Event) => {};\n  private count: number = 0;\n  render<U>(u: U): void {}\n}\nlet type = 1\n",
			[]string{"interface Shape @1-3", "type Id @4-4", "enum Color @5-5", "class Base @6-11", "method Base.size @7-7", "method Base.handle @8-8", "method Base.render @10-10", "let type @12-12"}},

		{"rust items", "lib.rs", "#[derive(Debug)] pub struct S { a: u8 }\npub(crate) enum E { A }\npub const fn twice(x: u8) -> u8 { x * 2 }\nunsafe extern \"C\" fn ffi() {}\nconst _: () = ();\npub static mut COUNT: u32 = 0;\ntype R<T> = Result<T, E>;\npub union U { a: u8 }\nmod tests;\n",
			[]string{"struct S @1-1", "enum E @2-2", "func twice @3-3", "func ffi @4-4", "static COUNT @6-6", "type R @7-7", "union U @8-8", "mod tests @9-9"}},
		{"rust impl and trait blocks", "lib.rs", "impl<T: Clone> From<T> for crate::a::Wrapper<T>\nwhere\n    T: Copy,\n{\n    fn from(t: T) -> Self {\n        let c = '}';\n        Self(t)\n    }\n}\ntrait Shape {\n    const SIDES: u32;\n    fn area(&self) -> f64;\n    fn name(&self) -> &'static str { \"shape\" }\n}\n",
			[]string{"method Wrapper.from @5-8", "trait Shape @10-14", "method Shape.area @12-12", "method Shape.name @13-13"}},
		{"rust modules, strings and comments", "lib.rs", "/* fn fake() { /* nested */ } */\nconst S: &str = r#\"\nfn fake2() {}\n\"#;\nconst Q: &str = r#\"say \" { \"#;\npub mod inner {\n    pub fn deep() {}\n    fn f<'a>(x: &'a str) -> &'a str { x }\n}\nmacro_rules! m { () => {} }\nfn main() { fn nested() {} }\n",
			[]string{"const S @2-4", "const Q @5-5", "mod inner @6-9", "func deep @7-7", "func f @8-8", "macro m @10-10", "func main @11-11"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, decls(tt.file, tt.src)); diff != "" {
				t.Errorf("Declarations(%s) (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

func TestDeclarationsBounded(t *testing.T) {
	big := strings.Repeat("def f(): pass\n", MaxFile/14+1)
	if got := Declarations("m.py", []byte(big)); got != nil {
		t.Errorf("a file of %d bytes (more than MaxFile): %d declarations, want none", len(big), len(got))
	}
	many := strings.Repeat("x = 1\n", MaxDecls+10)
	if got := len(Declarations("m.py", []byte(many))); got != MaxDecls {
		t.Errorf("%d assignments: %d declarations, want MaxDecls (%d)", MaxDecls+10, got, MaxDecls)
	}
}

func TestCode(t *testing.T) {
	for _, tt := range []struct{ file, src, want string }{
		{"a.py", "x = 'Cart' # Cart\ny = Cart\n", "x = '    '       \ny = Cart\n"},
		{"a.ts", "a(`x${Cart}y`) // Cart\n", "a(` ${Cart} `)        \n"},
		{"a.rs", "let s = \"Cart\"; /* Cart */ Cart::new()\n", "let s = \"    \";            Cart::new()\n"},
		{"a.go", "x := \"Cart\"\n", "x := \"Cart\"\n"},
	} {
		if got := string(Code(tt.file, []byte(tt.src))); got != tt.want {
			t.Errorf("Code(%s, %q)\n got %q\nwant %q", tt.file, tt.src, got, tt.want)
		}
	}
}
