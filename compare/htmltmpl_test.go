package compare

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
)

// The page was written by html/template from templatePageHTML until the
// template went (its execution kept every exported method in the binary).
// That template is the page's definition: writePage must give its bytes on
// every result. It differs from the one that ran only where the page's
// fields are strings now: html and css give them back the types
// (template.HTML, template.CSS) they had.
func templatePage(t *testing.T, pg *htmlPage) string {
	t.Helper()
	tm := template.Must(template.New("compare").Funcs(template.FuncMap{
		"dur":   report.Dur,
		"pct":   report.Pct,
		"eff":   func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"g3":    func(v float64) string { return fmt.Sprintf("%.3g", v) },
		"inc":   func(i int) int { return i + 1 },
		"cores": func(n int) string { return plural(n, "core") },
		"html":  func(s string) template.HTML { return template.HTML(s) },
		"css":   func(s string) template.CSS { return template.CSS(s) },
	}).Parse(templatePageHTML))
	var b bytes.Buffer
	if err := tm.Execute(&b, pg); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// randomStrs are the strings of the random results: "weak", and strings
// html/template escapes, a hostile one among them (markup that would open
// a script or an attribute, a javascript: URL, NUL, invalid UTF-8,
// U+2028, noncharacters).
var randomStrs = []string{"", "weak", "strong", `a<b>&'"+c` + "\x00é", "run-1", "1e+06",
	`f<"'>(x) </title></script><script>alert(1)</script><img src=x onerror=alert(1)> javascript:alert(1)` + "\x00\xff\xc3\u2028\ufdd0\ufffe"}

// fillRandom sets every exported field under v from small pools that
// reach each branch of the page: strings from strs (randomStrs or a pool
// aligned with it), zero and non-zero numbers, nil and set pointers.
func fillRandom(rng *rand.Rand, strs []string, v reflect.Value, depth int) {
	ints := []int64{0, 0, 1, 3, 12345, -7, 1 << 40}
	floats := []float64{0, 0, 0.25, 1, 0.9999, 1e6, 1.5e-7, -2, math.Inf(1), math.NaN()}
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[rng.IntN(len(strs))])
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(ints[rng.IntN(len(ints))])
	case reflect.Float64:
		v.SetFloat(floats[rng.IntN(len(floats))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Pointer:
		if depth > 6 || rng.IntN(4) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(rng, strs, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 6 {
			return
		}
		n := rng.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(rng, strs, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandom(rng, strs, v.Field(i), depth+1)
			}
		}
	}
}

// randomResult is a random result of strings from strs.
func randomResult(rng *rand.Rand, strs []string) *Result {
	var r Result
	fillRandom(rng, strs, reflect.ValueOf(&r).Elem(), 0)
	for i := range r.Constructs { // a construct has a column per run
		r.Constructs[i].Runs = make([]ConstructRun, len(r.Runs))
		for j := range r.Runs {
			fillRandom(rng, strs, reflect.ValueOf(&r.Constructs[i].Runs[j]).Elem(), 2)
		}
	}
	return &r
}

// Every string a trace or a user gives the page (run labels, construct
// names, messages) lands escaped where it lands: in text, an SVG plot's
// text. The random results are written twice, with randomStrs and with
// the same strings with their markup characters replaced by letters: an
// escaped string adds no markup, so both pages hold as many of each
// markup character; and the page holds no NUL (html/template wrote none).
// Unlike TestHTMLAsTemplate this also holds the plots, which both sides
// of that test share.
func TestHTMLHostileStrings(t *testing.T) {
	benign := make([]string, len(randomStrs))
	for i, s := range randomStrs {
		benign[i] = strings.Map(func(r rune) rune {
			if strings.ContainsRune("<>\"'&+\x00", r) {
				return 'x'
			}
			return r
		}, s)
	}
	write := func(seed uint64, strs []string) string {
		var b bytes.Buffer
		if err := WriteHTML(&b, randomResult(rand.New(rand.NewPCG(seed, 44)), strs)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plots := 0
	for seed := range uint64(400) {
		page, want := write(seed, randomStrs), write(seed, benign)
		for _, c := range []string{"<", ">", `"`, "'"} {
			if got, want := strings.Count(page, c), strings.Count(want, c); got != want {
				t.Fatalf("result %d: %d %q in the page, %d with harmless strings: a string is not escaped where it lands", seed, got, c, want)
			}
		}
		if i := strings.IndexByte(page, 0); i >= 0 {
			t.Fatalf("result %d: NUL at byte %d: %q", seed, i, page[max(0, i-300):i])
		}
		if strings.Contains(page, `id="plot-inflation"`) {
			plots++
		}
	}
	if plots == 0 {
		t.Fatal("no random result has the inflation plot")
	}
}

func TestHTMLAsTemplate(t *testing.T) {
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 44))
		r := randomResult(rng, randomStrs)
		var got bytes.Buffer
		if err := WriteHTML(&got, r); err != nil {
			t.Fatal(err)
		}
		if want := templatePage(t, buildPage(r)); got.String() != want {
			a, b := got.String(), want
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Fatalf("result %d: the page differs from the template's at byte %d:\n got %q\nwant %q", seed, i, a[i:min(len(a), i+200)], b[i:min(len(b), i+200)])
		}
	}
}

const templatePageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ptrace compare — {{len .R.Runs}} runs</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
td.l, th.l { text-align: left; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0.5em 0; }
.warn { color: #a15c00; }
.muted { color: #777; font-size: 0.85em; }
</style>
</head>
<body>
<h1>ptrace compare</h1>
<p class="muted">schema {{.R.Schema}} · {{.R.Scaling}} scaling · reference {{.R.Reference}}</p>
<table id="runs"><tr><th>#</th><th class="l">run</th><th>processes</th><th>cores</th>{{if eq .R.Scaling "weak"}}<th>problem size</th>{{end}}<th>elapsed</th><th>speedup</th></tr>
{{range $i, $r := .R.Runs}}<tr><td>{{inc $i}}</td><td class="l">{{$r.Name}}</td><td>{{$r.Processes}}</td><td>{{$r.Cores}}</td>{{if eq $.R.Scaling "weak"}}<td>{{$r.ProblemSize}}</td>{{end}}<td>{{dur $r.ElapsedNS}}</td><td>{{g3 $r.Speedup}}</td></tr>
{{end}}</table>
{{if .R.Problems}}<ul id="problems">{{range .R.Problems}}<li class="warn"><b>{{.Run}}</b>: {{.Message}}</li>{{end}}</ul>{{end}}

<h2>POP scaling</h2>
<p>Global efficiency = parallel efficiency × computation scalability; computation scalability compares useful time summed over all threads against the reference{{if eq .R.Scaling "weak"}}, per unit of problem size{{end}}. <span class="muted">{{.R.Note}}.</span></p>
<table id="heat"><tr><th class="l">efficiency</th>{{range $i, $r := .R.Runs}}<th>#{{inc $i}}<br>{{cores $r.Cores}}</th>{{end}}</tr>
{{range .Heat}}<tr><td class="l" style="{{css .Indent}}">{{.Name}}</td>{{range .Cells}}<td style="{{css .Style}}">{{eff .Value}}</td>{{end}}</tr>
{{end}}</table>
{{with .Lines}}<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}

{{if .R.Constructs}}
<h2>Work-time inflation per construct</h2>
<p>Total task time of each construct against the reference's (×), and its mean task duration.</p>
<table id="inflation"><tr><th class="l">construct</th>{{range $i, $r := .R.Runs}}<th>#{{inc $i}}</th>{{end}}</tr>
{{range .TopConstructs}}<tr><td class="l">{{.Name}}</td>{{range .Runs}}<td>{{if .Missing}}—{{else}}×{{printf "%.2f" .Inflation}} ({{dur .MeanNS}}){{end}}</td>{{end}}</tr>
{{end}}</table>
{{if .MoreConstructs}}<p class="muted">… {{.MoreConstructs}} more constructs in the JSON and CSV output.</p>{{end}}
<ul>{{range $i, $r := .R.Runs}}{{if $r.MostInflated}}<li>#{{inc $i}} lost {{dur $r.LostWorkNS}} of task time: {{range $j, $m := $r.MostInflated}}{{if $j}}; {{end}}{{$m.Construct}} +{{dur $m.ExtraNS}} (×{{printf "%.2f" $m.Inflation}}, {{pct $m.ShareOfLost}}){{end}}</li>{{end}}{{end}}</ul>
{{end}}
{{with .Bars}}<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}

<h2>Bounds</h2>
<p class="muted">T1 work, T∞ span, P cores; a greedy scheduler reaches a speedup between T1 / (T1/P + burdened span) and min(P, T1/T∞); the burdened span adds the measured mean overhead per task for every task on the critical path.</p>
<table id="bounds"><tr><th>#</th><th>P</th><th>T1</th><th>T∞</th><th>parallelism</th><th>T1/P</th><th>burdened T∞</th><th>speedup range</th><th>measured</th><th>× bound</th></tr>
{{range $i, $r := .R.Runs}}{{with $r.Bounds}}<tr><td>{{inc $i}}</td><td>{{.Cores}}</td><td>{{dur .WorkNS}}</td><td>{{dur .SpanNS}}</td><td>{{g3 .Parallelism}}</td><td>{{dur .AreaBoundNS}}</td><td>{{dur .BurdenedSpanNS}}</td><td>{{g3 .SpeedupMin}}–{{g3 .SpeedupMax}}</td><td>{{dur .MeasuredNS}}</td><td>{{printf "%.2f" .Distance}}</td></tr>{{end}}
{{end}}</table>
<ul>{{range $i, $r := .R.Runs}}{{with $r.Bounds}}<li>#{{inc $i}}: {{.Text}}</li>{{end}}{{end}}</ul>

{{if .R.Changes}}<h2>What changed</h2>
<ul id="changes">{{range .R.Changes}}<li>{{.Text}}</li>{{end}}</ul>{{end}}

{{with .Ready}}<h2>Ready tasks</h2>
<p>#{{$.ReadyIA}} {{$.ReadyA}} and #{{$.ReadyIB}} {{$.ReadyB}}, each from its own start.</p>
<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}
<p class="muted">All figures are in the JSON output (ptrace compare --json).</p>
</body>
</html>
`
