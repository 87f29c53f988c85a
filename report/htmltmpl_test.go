package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The HTML page was written by html/template from templatePageHTML until
// the template went (its execution kept every exported method in the
// binary). That template is the page's definition: writePage must give its
// bytes on every report. It differs from the one that ran only where the
// page's fields are strings now: html and css give them back the types
// (template.HTML, template.CSS) they had.
func templatePage(t *testing.T, pg *page) string {
	t.Helper()
	tm := template.Must(template.New("report").Funcs(template.FuncMap{
		"dur":             Dur,
		"join":            strings.Join,
		"bytes":           Bytes,
		"pct":             Pct,
		"classBasis":      ClassBasis,
		"progressNotable": func(w WaitTimes) bool { return ProgressNotable(&w) },
		"progressHint":    func(w WaitTimes) string { return ProgressHint(&w) },
		"rel":             func(ns, origin int64) string { return Dur(ns - origin) },
		"ratio": func(a, b int64) float64 {
			if b <= 0 {
				return 0
			}
			return float64(a) / float64(b)
		},
		"eff":           func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"effStyle":      func(v float64) template.CSS { return template.CSS(effStyle(v)) },
		"indent":        func(n int) template.CSS { return template.CSS(fmt.Sprintf("padding-left: %.1fem", 0.3+1.5*float64(n))) },
		"hex":           func(v int64) string { return fmt.Sprintf("%#x", v) },
		"clockSummary":  ClockSummary,
		"adviceLine":    AdviceLine,
		"flushLine":     FlushLine,
		"rawLine":       RawLine,
		"withoutEvents": WithoutEventsLine,
		"code": func(s string) template.HTML {
			short := ShortCode(s)
			if short == s {
				return template.HTML(template.HTMLEscapeString(s))
			}
			return template.HTML(`<span title="` + template.HTMLEscapeString(s) + `">` + template.HTMLEscapeString(short) + `</span>`)
		},
		"html": func(s string) template.HTML { return template.HTML(s) },
		"css":  func(s string) template.CSS { return template.CSS(s) },
	}).Parse(templatePageHTML))
	var b bytes.Buffer
	if err := tm.Execute(&b, pg); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// randomStrs are the strings of the random reports: the values the page
// tests for (window bounds, "source_lines"), code names ShortCode
// shortens, and strings html/template escapes, a hostile one among them
// (markup that would end the <title>, open a script or an attribute, a
// javascript: URL, NUL, invalid UTF-8, U+2028, noncharacters) long
// enough to be shortened, so it lands in a tooltip attribute too.
var randomStrs = []string{"", "mpi", "user", "recorded", "source_lines", "warning", `a<b>&'"+c` + "\x00é",
	"std::vector<int>::push_back(int const&) at /home/someone/project/src/solver/kernels/stencil_kernel.cpp:1234", "main.c:12", "1e+06",
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

func TestHTMLAsTemplate(t *testing.T) {
	check := func(name string, r *Report, o HTMLOptions) {
		t.Helper()
		var got bytes.Buffer
		if err := WriteHTML(&got, r, o); err != nil {
			t.Fatal(err)
		}
		if o.MaxRows <= 0 {
			o.MaxRows = 256
		}
		if o.MaxHistograms <= 0 {
			o.MaxHistograms = 6
		}
		want := templatePage(t, buildPage(r, o))
		if got.String() != want {
			a, b := got.String(), want
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Fatalf("%s: the page differs from the template's at byte %d:\n got %q\nwant %q", name, i, a[i:min(len(a), i+200)], b[i:min(len(b), i+200)])
		}
	}
	check("sample", sampleReport(), HTMLOptions{})
	check("sample, 1 row", sampleReport(), HTMLOptions{MaxRows: 1, MaxHistograms: 1})
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 44))
		var r Report
		fillRandom(rng, randomStrs, reflect.ValueOf(&r).Elem(), 0)
		check(fmt.Sprint("random report ", seed), &r, HTMLOptions{MaxRows: 1 + rng.IntN(3), MaxHistograms: 1 + rng.IntN(3)})
	}
}

// harmless is s with the characters that are markup in HTML, or that
// html/template rewrites, replaced by letters: a string of the same
// branches of the page (ShortCode shortens it or not alike, the values
// the page tests for have none of them) that needs no escaping.
func harmless(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("<>\"'&+\x00", r) {
			return 'x'
		}
		return r
	}, s)
}

// Every string a trace or a user gives the page (names, paths, labels,
// messages, the trace's directory) lands escaped where it lands: in text,
// the <title>, a quoted attribute, an SVG plot's text. The random reports
// are written twice, with randomStrs and with their harmless twins: an
// escaped string adds no markup, so both pages hold as many of each
// markup character; and the page holds no NUL (html/template wrote none).
// Unlike TestHTMLAsTemplate this also holds the plots, which both sides
// of that test share.
func TestHTMLHostileStrings(t *testing.T) {
	benign := make([]string, len(randomStrs))
	for i, s := range randomStrs {
		benign[i] = harmless(s)
		if (ShortCode(s) == s) != (ShortCode(benign[i]) == benign[i]) {
			t.Fatalf("%q and %q: ShortCode shortens one of them only", s, benign[i])
		}
	}
	write := func(seed uint64, strs []string) string {
		rng := rand.New(rand.NewPCG(seed, 44))
		var r Report
		fillRandom(rng, strs, reflect.ValueOf(&r).Elem(), 0)
		var b bytes.Buffer
		if err := WriteHTML(&b, &r, HTMLOptions{MaxRows: 1 + rng.IntN(3), MaxHistograms: 1 + rng.IntN(3)}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plots := 0
	for seed := range uint64(400) {
		page, want := write(seed, randomStrs), write(seed, benign)
		for _, c := range []string{"<", ">", `"`, "'"} {
			if got, want := strings.Count(page, c), strings.Count(want, c); got != want {
				t.Fatalf("random report %d: %d %q in the page, %d with harmless strings: a string is not escaped where it lands", seed, got, c, want)
			}
		}
		if i := strings.IndexByte(page, 0); i >= 0 {
			t.Fatalf("random report %d: NUL at byte %d: %q", seed, i, page[max(0, i-300):i])
		}
		if strings.Contains(page, "<svg") {
			plots++
		}
	}
	if plots == 0 {
		t.Fatal("no random report has a plot")
	}
}

const templatePageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ptrace report — {{.R.Trace.Dir}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
td.l, th.l { text-align: left; }
.facts td { text-align: left; border: none; padding: 0.1em 0.8em 0.1em 0; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0.5em 0; }
.warn { color: #a15c00; }
.problem { color: #b71c1c; }
.muted { color: #777; font-size: 0.85em; }
.key span { display: inline-block; padding: 0 0.5em; margin-right: 0.4em; }
</style>
</head>
<body>
<h1>ptrace report</h1>
<p class="muted">schema {{.R.Schema}} · {{.R.Trace.Dir}}</p>
<table class="facts">
<tr><td>processes</td><td>{{.R.Trace.Processes}} on {{.R.Trace.Hosts}} hosts, {{.R.Trace.Threads}} threads</td></tr>
<tr><td>events</td><td>{{.R.Trace.Events}} ({{bytes .R.Trace.Bytes}})</td></tr>
<tr><td>span</td><td>{{dur .R.Trace.DurationNS}}</td></tr>
{{with .R.Trace.Window}}{{if eq .Bounds "mpi"}}<tr><td>window</td><td>{{dur .DurationNS}}, MPI_Init → MPI_Finalize (start-up and shutdown not measured)</td></tr>{{else if eq .Bounds "user"}}<tr><td>window</td><td>{{dur .DurationNS}}, as asked</td></tr>{{else if eq .Bounds "recorded"}}<tr><td>window</td><td>{{dur .DurationNS}}, the longest stretch every process recorded (recording was switched off: see the warnings)</td></tr>{{end}}{{end}}
{{with .R.Trace.Producer}}<tr><td>producer</td><td>{{.}}</td></tr>{{end}}
{{with .R.ClockSync}}<tr><td>clocks</td><td>{{clockSummary .}}</td></tr>{{end}}
{{range .R.Trace.Unavailable}}{{if eq . "source_lines"}}<tr><td class="warn">no lines</td><td class="warn">the program has no line table (compiled without -g): code locations are named function+offset; compile with -g for file:line</td></tr>{{end}}{{end}}
{{if .R.Trace.Warnings}}<tr><td class="warn">warnings</td><td class="warn">{{.R.Trace.Warnings.Count}}{{range .Warnings}}<br>{{.}}{{end}}</td></tr>{{end}}
</table>

{{if .NoThread}}<p class="warn" id="no-thread">no thread modelled: the trace has no thread whose time the analysis accounts (see the notes), so there is no time breakdown, POP efficiency or critical path</p>{{end}}
{{with .R.Breakdown}}
<h2>Time breakdown</h2>
<p class="key"><span style="background:#4caf50">work {{pct .WorkRatio}}</span><span style="background:#2196f3;color:#fff">MPI {{pct .MPIRatio}}</span><span style="background:#ff9800">overhead {{pct .OverheadRatio}}</span><span style="background:#bdbdbd">idleness {{pct .IdlenessRatio}}</span> of {{dur .ThreadTimeNS}} thread time</p>
{{if $.R.Trace.NoOpenMP}}<p class="muted">no OpenMP in the trace: Tallent's class and the OpenMP efficiencies do not apply</p>{{else if .Class}}<p>Tallent class <b>{{.Class}}</b> ({{classBasis .}}): {{$.Class}}</p>{{end}}
{{with .Advice}}<p id="advice">{{adviceLine .}}</p>{{else}}{{with $.Interp}}<p>{{.}}</p>{{end}}{{end}}
{{with .BufferFlushes}}<p class="warn" id="buffer-flushes">{{flushLine . $.R.Breakdown.ThreadTimeNS (len $.R.Breakdown.PerProcess)}}</p>{{end}}
{{if or .ForkJoinNS .IdleDuringMPINS}}<p class="muted" id="raw-components">inside overhead and idleness: {{rawLine .ForkJoinNS .IdleDuringMPINS .IdleSerialDuringMPINS}}</p>{{end}}
{{if .SyncRuntimeAsWork}}<p class="muted" id="sync-runtime">runtime code inside barriers, taskwaits and taskgroups (outside their waits) is booked as work, as in POT (--sync-runtime-as-work)</p>{{else if .SyncRuntimeNS}}<p class="muted" id="sync-runtime">overhead includes {{dur .SyncRuntimeNS}} of runtime code inside barriers, taskwaits and taskgroups, outside their waits</p>{{end}}
{{end}}
{{with .Breakdown}}<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}

{{with .R.POP}}
<h2>POP efficiencies</h2>
<p class="muted">TALP's hybrid model: {{.Processes}} processes × {{.ThreadsPerProcess}} threads, elapsed {{dur .ElapsedNS}}; per thread useful {{dur .UsefulNS}}, MPI {{dur .MPINS}}, idle {{dur .IdleNS}} (serial {{dur .IdleSerialNS}}, load balance {{dur .IdleLBNS}}, scheduling {{dur .IdleSchedNS}}).{{if or .ForkJoinNS .IdleDuringMPINS}} Per thread, inside idle: {{rawLine .ForkJoinNS .IdleDuringMPINS .IdleSerialDuringMPINS}}.{{end}}</p>
{{with .ProcessesWithoutEvents}}<p class="warn" id="pop-without-events">{{withoutEvents .}}</p>{{end}}
{{end}}
{{if .POPRows}}
<table id="pop-tree">
<tr><th class="l">efficiency</th><th>value</th></tr>
{{range .POPRows}}<tr><td class="l" style="{{indent .Indent}}">{{.Name}}</td><td style="{{css .Style}}">{{eff .Value}}</td></tr>
{{end}}</table>
{{end}}
{{if .POPProcs}}
<table id="pop-per-process">
<tr><th>rank</th><th>threads</th><th>elapsed</th><th>useful</th>{{if .POPOpenMP}}<th>fork/join</th><th>idle during MPI</th><th>OpenMP parallel</th><th>serialization</th><th>load balance</th><th>scheduling</th>{{end}}</tr>
{{range .POPProcs}}<tr><td>{{.Rank}}</td><td>{{.Threads}}</td><td>{{dur .ElapsedNS}}</td><td>{{dur .UsefulNS}}</td>{{if $.POPOpenMP}}<td>{{dur .ForkJoinNS}}</td><td>{{dur .IdleDuringMPINS}} (serial {{dur .IdleSerialDuringMPINS}})</td><td style="{{effStyle .OMPParallelEfficiency}}">{{eff .OMPParallelEfficiency}}</td><td style="{{effStyle .OMPSerializationEfficiency}}">{{eff .OMPSerializationEfficiency}}</td><td style="{{effStyle .OMPLoadBalance}}">{{eff .OMPLoadBalance}}</td><td style="{{effStyle .OMPSchedulingEfficiency}}">{{eff .OMPSchedulingEfficiency}}</td>{{end}}</tr>
{{end}}</table>
{{if .POPMore}}<p class="muted">… {{.POPMore}} more processes in the CSV tables.</p>{{end}}
{{end}}

{{with .R.CriticalPath}}
<h2>Critical path</h2>
<p>{{dur .LengthNS}} = {{pct .ShareOfRunTime}} of run time {{dur .RunTimeNS}}; work T1 {{dur .WorkNS}}, parallelism {{printf "%.3g" .Parallelism}}; {{.Nodes}} nodes, {{.RankCrossings}} rank crossings.</p>
{{if .OffPath.Shown}}{{with .OffPath}}<p>Not on the path {{dur .NS}} ({{pct .Share}} of run time): {{join .Parts ", "}}.</p>
{{end}}{{end}}{{if .ByKind}}<table><tr><th class="l">by kind</th><th>time</th><th>share</th><th>nodes</th></tr>{{range .ByKind}}<tr><td class="l">{{.Name}}</td><td>{{dur .NS}}</td><td>{{pct .Share}}</td><td>{{.Nodes}}</td></tr>{{end}}</table>{{end}}
{{end}}
{{with .Path}}<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}
{{with .R.Graph}}{{if .Tasks}}<p>Task graph: {{.Tasks}} tasks, {{.Edges}} edges ({{.RemoteEdges}} remote), {{.Roots}} roots, {{.Leaves}} leaves. Root longest paths relative to the critical path: mean {{eff .RootPaths.Mean}}, median {{eff .RootPaths.Median}}, min {{eff .RootPaths.Min}}, {{.RootPaths.Within4Pct}} within 4%.</p>{{end}}{{end}}

{{with .R.Tasks}}
<h2>Tasks</h2>
<p>{{if .Count}}{{.Count}} explicit tasks.{{else}}No explicit tasks: the program's OpenMP, if any, is parallel regions and worksharing.{{end}}</p>
{{if .Constructs}}<table id="constructs"><tr><th class="l">construct</th><th class="l">kind</th><th>count</th><th>sum</th><th>mean</th><th>min</th><th>max</th><th>share</th><th>creation</th><th>per thread</th></tr>
{{range .Constructs}}<tr><td class="l">{{code .Name}}</td><td class="l">{{.Kind}}</td><td>{{.Count}}</td><td>{{dur .SumNS}}</td><td>{{dur .MeanNS}}</td><td>{{dur .MinNS}}</td><td>{{dur .MaxNS}}</td><td>{{pct .Share}}</td><td>{{dur .CreateNS}}</td><td>{{printf "%.3g" .TasksPerThread}}</td></tr>
{{end}}</table>{{end}}
{{if .Findings}}<ul>{{range .Findings}}<li class="{{.Severity}}"><b>{{.Severity}}</b> {{.Topic}}: {{.Message}}</li>{{end}}</ul>{{end}}
{{end}}
{{with .Ready}}<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}
{{if .Histograms}}<h3>Task durations per construct</h3>
<div class="plots">{{range .Histograms}}<figure id="{{.ID}}">{{html .SVG}}</figure>{{end}}</div>{{end}}

{{with .R.WaitStates}}{{if or .Calls .MPINS}}
<h2>Wait states</h2>
<p>{{dur .MPINS}} of MPI time in {{.Calls}} calls; each call counts in one pattern at most, so the patterns and transfer/other add up to the MPI time.</p>
{{if .Delays}}<ul>{{range .Delays}}{{if or (gt .NS 0) (gt .LongTermNS 0)}}<li>rank {{.Rank}}'s <b>{{code .Code}}</b>{{with .Site}} before {{code .}}{{end}} costs {{pct .Share}} of all waiting (its excess time before the calls waited for){{if gt .LongTermNS 0}}, and {{dur .LongTermNS}} more through the waits it propagated{{end}}</li>{{end}}{{end}}</ul>{{end}}
{{if progressNotable .WaitTimes}}<p>{{progressHint .WaitTimes}}</p>{{end}}
<table id="wait-sites"><tr><th class="l">call site</th><th>MPI time</th><th>calls</th><th>late sender</th><th>late receiver</th><th>wait at N×N</th><th>wait at barrier</th><th>late broadcast</th><th>early reduce</th>{{if .Windows}}<th>wait at fence</th><th>wait at window create</th><th>wait at window free</th>{{end}}{{if .Epochs}}<th>late post</th><th>early wait</th>{{end}}{{if .Locks}}<th>lock contention</th>{{end}}{{if .Progress}}<th>wait for progress</th>{{end}}<th>transfer/other</th></tr>
{{$w := .Windows}}{{$e := .Epochs}}{{$l := .Locks}}{{$p := .Progress}}{{range .CallSites}}<tr><td class="l">{{.Func}}{{with .Site}} at {{code .}}{{end}}{{with .Region}} in {{code .}}{{end}}</td><td>{{dur .MPINS}}</td><td>{{.Calls}}</td><td>{{dur .LateSenderNS}}</td><td>{{dur .LateReceiverNS}}</td><td>{{dur .WaitNxNNS}}</td><td>{{dur .WaitBarrierNS}}</td><td>{{dur .LateBroadcastNS}}</td><td>{{dur .EarlyReduceNS}}</td>{{if $w}}<td>{{dur .WaitAtFenceNS}}</td><td>{{dur .WaitAtWinCreateNS}}</td><td>{{dur .WaitAtWinFreeNS}}</td>{{end}}{{if $e}}<td>{{dur .LatePostNS}}</td><td>{{dur .EarlyWaitNS}}</td>{{end}}{{if $l}}<td>{{dur .LockContentionNS}}</td>{{end}}{{if $p}}<td>{{dur .WaitForProgressNS}}</td>{{end}}<td>{{dur .OtherNS}}</td></tr>
{{end}}</table>
{{end}}{{end}}
{{if .WaitHeat}}<table id="wait-heat"><tr><th>rank</th>{{range .WaitCols}}<th>{{.}}</th>{{end}}</tr>
{{range .WaitHeat}}<tr><td>{{.Rank}}</td>{{range .Cells}}<td style="{{css .Style}}" title="{{.Title}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{if gt .WaitMore 0}}<p class="muted">… {{.WaitMore}} more processes in the CSV tables.</p>{{end}}{{end}}

{{with .OMPWaits}}
<h2>{{.Title}}</h2>
<p>{{dur .WaitingNS}} of thread time neither working nor in MPI (the breakdown's overhead + idleness − fork/join − sync runtime), split by where the threads waited and, separately, by why they had no work; each split adds up to the whole.</p>
<table id="omp-wait-split"><tr><th class="l">where</th><th>time</th><th>share</th></tr>
{{range .Places}}{{if gt .NS 0}}<tr><td class="l">{{.Name}}</td><td>{{dur .NS}}</td><td>{{pct (ratio .NS $.OMPWaits.WaitingNS)}}</td></tr>{{end}}{{end}}
<tr><th class="l">why</th><th></th><th></th></tr>
{{range .Reasons}}{{if gt .NS 0}}<tr><td class="l">{{.Name}}</td><td>{{dur .NS}}</td><td>{{pct (ratio .NS $.OMPWaits.WaitingNS)}}</td></tr>{{end}}{{end}}</table>
<table id="omp-wait-constructs"><tr><th class="l">where</th><th class="l">construct</th><th class="l">region</th><th>waits</th><th>time</th><th>task ready</th><th>on dependences</th><th>no task</th></tr>
{{range .Constructs}}<tr><td class="l">{{.Kind}}</td><td class="l">{{code .Construct}}</td><td class="l">{{code .Region}}</td><td>{{.Count}}</td><td>{{dur .WaitingNS}}</td><td>{{dur .TaskReadyNS}}</td><td>{{dur .DependencesNS}}</td><td>{{dur .NoTaskNS}}</td></tr>
{{end}}</table>
{{if gt .More 0}}<p class="muted">… {{.More}} more constructs in the CSV tables.</p>{{end}}
{{if .Mutexes}}<p>Waiting to acquire locks and critical sections: {{dur .MutexWaitNS}}, inside the breakdown's work (the task runs while it waits).</p>
<table id="omp-mutexes"><tr><th class="l">mutex</th><th class="l">call site</th><th>acquisitions</th><th>waiting</th><th title="from the request to the previous holder's release (Scalasca's contention); the rest of the wait is the hand-over">while held by another</th><th>longest wait</th><th>held</th></tr>
{{range .Mutexes}}<tr><td class="l">{{.Kind}}</td><td class="l">{{code .Construct}}</td><td>{{.Acquisitions}}</td><td>{{dur .WaitNS}}</td><td>{{dur .ContentionNS}}</td><td>{{dur .MaxWaitNS}}</td><td>{{dur .HoldNS}}</td></tr>
{{end}}</table>{{end}}{{end}}

{{with .R.Anomalies}}
<h2>Anomalies</h2>
<p>{{.Found}} of {{.Tested}} tasks above their construct's prediction bound (α = {{.Alpha}}, Bonferroni-corrected), in {{len .Groups}} groups. <span class="muted">{{.Model}}</span></p>
{{if .Models}}<table><tr><th class="l">construct</th><th class="l">model</th><th>tasks</th><th>slope</th><th>scale</th><th>bound</th><th>found</th></tr>
{{range .Models}}<tr><td class="l">{{code .Construct}}</td><td class="l">{{.Kind}}{{with .Attribute}} on {{.}}{{end}}</td><td>{{.Tasks}}</td><td>{{printf "%.3g" .Slope}}</td><td>{{printf "%.3g" .Scale}}</td><td>×{{printf "%.3g" .BoundFactor}}</td><td>{{.Found}}</td></tr>{{end}}</table>{{end}}
{{end}}
{{if .Anomalies}}<table id="anomalies"><tr><th>group</th><th>rank</th><th>thread</th><th>task</th><th class="l">construct</th><th>start</th><th>duration</th><th>predicted</th><th>score</th></tr>
{{range .Anomalies}}<tr><td>{{.Group}}</td><td>{{.Rank}}</td><td>{{.Thread}}</td><td>{{hex .Task}}</td><td class="l">{{code .Construct}}</td><td>{{rel .StartNS $.Origin}}</td><td>{{dur .DurNS}}</td><td>{{dur .PredictedNS}}</td><td>{{printf "%.1f" .Score}}</td></tr>
{{end}}</table>
{{if gt .AnomMore 0}}<p class="muted">… {{.AnomMore}} more in the CSV tables.</p>{{end}}{{end}}

{{with .R.ClockSync}}{{if .PerProcess}}
<h2>Clock synchronisation</h2>
<table><tr><th>rank</th><th>offset at init</th><th>offset at finalize</th><th>drift (ppm)</th><th>CLC max correction</th><th>violations recorded</th><th>after offsets</th></tr>
{{range .PerProcess}}<tr><td>{{.Rank}}</td><td>{{dur .OffsetInitNS}}</td><td>{{dur .OffsetFinalNS}}</td><td>{{printf "%.3g" .DriftPPM}}</td><td>{{dur .MaxCorrectionNS}}</td><td>{{.Violations}}</td><td>{{.ViolationsInterpolated}}</td></tr>
{{end}}</table>{{end}}{{end}}
<p class="muted">Times in tables are relative to the first event of the trace; all figures are in the JSON report.</p>
</body>
</html>
`
