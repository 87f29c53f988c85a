package cube_test

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// An independent reader of .cubex files, for the tests: it checks what
// CubeLib's reader relies on (tar members as CubeLib walks them, the
// anchor's line layout its scanner matches, the index and data files) and
// returns the stored values. It shares no code with the writer.

type decoded struct {
	attrs   map[string]string
	metrics []dMetric
	byName  map[string]int
	regions []dRegion
	cnodes  []dCnode
	locs    []dLoc
	// values[metric id][cnode id][location id], as stored (inclusive
	// along the metric tree, exclusive along the call tree).
	values map[int]map[int][]float64
}

type dMetric struct {
	name, disp, dtype, typ, unit, descr, expr string
	parent                                    int // -1 for a root
}

type dRegion struct{ name, mod, paradigm, role string }

type dCnode struct {
	parent, callee, line int
	mod                  string
}

type dLoc struct {
	name               string
	thread, rank, proc int // thread number, process rank, location group index
	procName, host     string
}

// The anchor's lines, as CubeLib's scanner expects them (Cube4Scanner.ll:
// fixed tokens, one element per line as CubeW writes them). Text holds no
// raw '<' or '&'.
var anchorLine = func() *regexp.Regexp {
	txt := `(?:[^<>&"]|&(?:lt|gt|amp|apos|quot);)*`
	forms := []string{
		`<\?xml version="1\.0" encoding="UTF-8"\?>`, ``, `<cube version="4\.4">`, `</cube>`,
		`<attr key="` + txt + `" value="` + txt + `"/>`,
		`<doc>`, `</doc>`, `<mirrors>`, `</mirrors>`, `<metrics>`, `</metrics>`, `<program>`, `</program>`,
		`<system>`, `</system>`, `<topologies>`, `</topologies>`,
		`<metric id="\d+" type="(?:EXCLUSIVE|POSTDERIVED)">`, `</metric>`,
		`<(disp_name|uniq_name|dtype|uom|url|descr|cubepl|name|mangled_name|paradigm|role|class|type)>` + txt + `</(?:disp_name|uniq_name|dtype|uom|url|descr|cubepl|name|mangled_name|paradigm|role|class|type)>`,
		`<rank>\d+</rank>`,
		`<region id="\d+" mod="` + txt + `" begin="-?\d+" end="-?\d+">`, `</region>`,
		`<cnode id="\d+" (?:line="\d+" )?(?:mod="` + txt + `" )?calleeId="\d+">`, `</cnode>`,
		`<systemtreenode Id="\d+">`, `</systemtreenode>`, `<locationgroup Id="\d+">`, `</locationgroup>`,
		`<location Id="\d+">`, `</location>`,
	}
	return regexp.MustCompile(`^(?:` + strings.Join(forms, `|`) + `)$`)
}()

// tarMembersCubeLib walks the archive as CubeLib's TarReader does: the
// next header at header + 512 + (size/512 + 1)·512 (size > 0).
func tarMembersCubeLib(b []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for pos := 0; pos+512 <= len(b); {
		h := b[pos : pos+512]
		name := string(bytes.TrimRight(h[:100], "\x00"))
		sizeField := strings.TrimRight(strings.TrimSpace(string(bytes.TrimRight(h[124:136], "\x00"))), "\x00")
		size := 0
		if sizeField != "" {
			n, err := strconv.ParseInt(sizeField, 8, 64)
			if err != nil {
				return nil, fmt.Errorf("member %q: size %q", name, sizeField)
			}
			size = int(n)
		}
		if name != "" {
			if !bytes.HasPrefix(h[257:], []byte("ustar")) {
				return nil, fmt.Errorf("member %q: not a ustar header", name)
			}
			if pos+512+size > len(b) {
				return nil, fmt.Errorf("member %q: %d bytes past the end", name, pos+512+size-len(b))
			}
			out[name] = b[pos+512 : pos+512+size]
		}
		next := pos + 512
		if size > 0 {
			next += (size/512 + 1) * 512
		}
		pos = next
	}
	return out, nil
}

type xMetric struct {
	ID       int       `xml:"id,attr"`
	Type     string    `xml:"type,attr"`
	Disp     string    `xml:"disp_name"`
	Uniq     string    `xml:"uniq_name"`
	DType    string    `xml:"dtype"`
	UOM      string    `xml:"uom"`
	Descr    string    `xml:"descr"`
	Expr     string    `xml:"cubepl"`
	Children []xMetric `xml:"metric"`
}

type xCnode struct {
	ID       int      `xml:"id,attr"`
	Line     *int     `xml:"line,attr"`
	Mod      string   `xml:"mod,attr"`
	Callee   int      `xml:"calleeId,attr"`
	Children []xCnode `xml:"cnode"`
}

type xLocation struct {
	ID   int    `xml:"Id,attr"`
	Name string `xml:"name"`
	Rank int    `xml:"rank"`
	Type string `xml:"type"`
}

type xGroup struct {
	ID   int         `xml:"Id,attr"`
	Name string      `xml:"name"`
	Rank int         `xml:"rank"`
	Type string      `xml:"type"`
	Locs []xLocation `xml:"location"`
}

type xSTN struct {
	ID       int      `xml:"Id,attr"`
	Name     string   `xml:"name"`
	Class    string   `xml:"class"`
	Groups   []xGroup `xml:"locationgroup"`
	Children []xSTN   `xml:"systemtreenode"`
}

type xCube struct {
	Version string `xml:"version,attr"`
	Attrs   []struct {
		Key   string `xml:"key,attr"`
		Value string `xml:"value,attr"`
	} `xml:"attr"`
	Metrics []xMetric `xml:"metrics>metric"`
	Regions []struct {
		ID       int    `xml:"id,attr"`
		Mod      string `xml:"mod,attr"`
		Name     string `xml:"name"`
		Paradigm string `xml:"paradigm"`
		Role     string `xml:"role"`
	} `xml:"program>region"`
	Cnodes []xCnode `xml:"program>cnode"`
	System []xSTN   `xml:"system>systemtreenode"`
}

func decode(b []byte) (*decoded, error) {
	// Both walks of the archive must see the same members.
	members, err := tarMembersCubeLib(b)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(bytes.NewReader(b))
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("archive/tar: %w", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if h.Size%512 == 0 {
			return nil, fmt.Errorf("member %s: size %d is a multiple of 512 (CubeLib would skip a block)", h.Name, h.Size)
		}
		if !bytes.Equal(members[h.Name], body) {
			return nil, fmt.Errorf("member %s: CubeLib's walk of the archive reads other bytes", h.Name)
		}
		n++
	}
	if n != len(members) {
		return nil, fmt.Errorf("archive/tar sees %d members, CubeLib's walk %d", n, len(members))
	}
	anchor, ok := members["anchor.xml"]
	if !ok {
		return nil, fmt.Errorf("no anchor.xml")
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(anchor), "\n"), "\n") {
		if !anchorLine.MatchString(line) {
			return nil, fmt.Errorf("anchor.xml line %d: %q is not a line CubeLib's scanner reads", i+1, line)
		}
	}
	var x xCube
	if err := xml.Unmarshal(anchor, &x); err != nil {
		return nil, fmt.Errorf("anchor.xml: %w", err)
	}
	if x.Version != "4.4" {
		return nil, fmt.Errorf("anchor version %q", x.Version)
	}
	d := &decoded{attrs: map[string]string{}, byName: map[string]int{}, values: map[int]map[int][]float64{}}
	for _, a := range x.Attrs {
		d.attrs[a.Key] = a.Value
	}
	var walkM func(m xMetric, parent int) error
	walkM = func(m xMetric, parent int) error {
		if m.ID != len(d.metrics) {
			return fmt.Errorf("metric %q: id %d, preorder position %d", m.Uniq, m.ID, len(d.metrics))
		}
		if _, dup := d.byName[m.Uniq]; dup {
			return fmt.Errorf("metric %q twice", m.Uniq)
		}
		if m.DType != "DOUBLE" && m.DType != "UINT64" {
			return fmt.Errorf("metric %q: dtype %q", m.Uniq, m.DType)
		}
		if (m.Type == "POSTDERIVED") != (m.Expr != "") {
			return fmt.Errorf("metric %q: type %s with expression %q", m.Uniq, m.Type, m.Expr)
		}
		d.byName[m.Uniq] = m.ID
		d.metrics = append(d.metrics, dMetric{name: m.Uniq, disp: m.Disp, dtype: m.DType, typ: m.Type, unit: m.UOM, descr: m.Descr, expr: m.Expr, parent: parent})
		for _, c := range m.Children {
			if err := walkM(c, m.ID); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range x.Metrics {
		if err := walkM(m, -1); err != nil {
			return nil, err
		}
	}
	for i, r := range x.Regions {
		if r.ID != i {
			return nil, fmt.Errorf("region %q: id %d at position %d", r.Name, r.ID, i)
		}
		d.regions = append(d.regions, dRegion{name: r.Name, mod: r.Mod, paradigm: r.Paradigm, role: r.Role})
	}
	var walkC func(c xCnode, parent int) error
	walkC = func(c xCnode, parent int) error {
		if c.ID != len(d.cnodes) {
			return fmt.Errorf("cnode id %d at preorder position %d", c.ID, len(d.cnodes))
		}
		if c.Callee < 0 || c.Callee >= len(d.regions) {
			return fmt.Errorf("cnode %d: callee %d of %d regions", c.ID, c.Callee, len(d.regions))
		}
		line := -1
		if c.Line != nil {
			line = *c.Line
		}
		d.cnodes = append(d.cnodes, dCnode{parent: parent, callee: c.Callee, line: line, mod: c.Mod})
		for _, k := range c.Children {
			if err := walkC(k, c.ID); err != nil {
				return err
			}
		}
		return nil
	}
	for _, c := range x.Cnodes {
		if err := walkC(c, -1); err != nil {
			return nil, err
		}
	}
	groups := 0
	var walkS func(s xSTN, host string) error
	walkS = func(s xSTN, host string) error {
		if s.Class == "node" {
			host = s.Name
		}
		for _, g := range s.Groups {
			if g.ID != groups {
				return fmt.Errorf("location group id %d at position %d", g.ID, groups)
			}
			for t, l := range g.Locs {
				if l.ID != len(d.locs) {
					return fmt.Errorf("location id %d at position %d", l.ID, len(d.locs))
				}
				if l.Rank != t || l.Type != "thread" {
					return fmt.Errorf("location %d: rank %d type %q, want thread %d", l.ID, l.Rank, l.Type, t)
				}
				d.locs = append(d.locs, dLoc{name: l.Name, thread: t, rank: g.Rank, proc: groups, procName: g.Name, host: host})
			}
			groups++
		}
		for _, k := range s.Children {
			if err := walkS(k, host); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range x.System {
		if err := walkS(s, ""); err != nil {
			return nil, err
		}
	}
	for name, body := range members {
		if name == "anchor.xml" {
			continue
		}
		base, ext, ok := strings.Cut(name, ".")
		id, err := strconv.Atoi(base)
		if !ok || err != nil || id < 0 || id >= len(d.metrics) || (ext != "index" && ext != "data") {
			return nil, fmt.Errorf("member %q: not a metric's index or data", name)
		}
		if d.metrics[id].expr != "" {
			return nil, fmt.Errorf("member %q: derived metric %s has stored values", name, d.metrics[id].name)
		}
		if ext == "index" {
			if _, ok := members[base+".data"]; !ok {
				return nil, fmt.Errorf("member %q without %s.data", name, base)
			}
			if err := d.readMetric(id, body, members[base+".data"]); err != nil {
				return nil, fmt.Errorf("metric %s: %w", d.metrics[id].name, err)
			}
		} else if _, ok := members[base+".index"]; !ok {
			return nil, fmt.Errorf("member %q without %s.index", name, base)
		}
	}
	return d, nil
}

func (d *decoded) readMetric(id int, index, data []byte) error {
	const im, dm = "CUBEX.INDEX", "CUBEX.DATA"
	if len(index) < len(im)+7 || string(index[:len(im)]) != im {
		return fmt.Errorf("index marker")
	}
	h := index[len(im):]
	if binary.LittleEndian.Uint32(h) != 1 || binary.LittleEndian.Uint16(h[4:]) != 0 {
		return fmt.Errorf("index header % x", h[:7])
	}
	nc, nl := len(d.cnodes), len(d.locs)
	var rows []int
	switch h[6] {
	case 3: // dense
		for c := range nc {
			rows = append(rows, c)
		}
		if len(h) != 7 {
			return fmt.Errorf("dense index with %d more bytes", len(h)-7)
		}
	case 1: // sparse
		if len(h) < 11 {
			return fmt.Errorf("sparse index without count")
		}
		n := int(binary.LittleEndian.Uint32(h[7:]))
		if len(h) != 11+4*n {
			return fmt.Errorf("sparse index of %d rows in %d bytes", n, len(h))
		}
		for i := range n {
			c := int(binary.LittleEndian.Uint32(h[11+4*i:]))
			if c >= nc || (i > 0 && c <= rows[i-1]) {
				return fmt.Errorf("index position %d: call path %d (of %d, after %v)", i, c, nc, rows)
			}
			rows = append(rows, c)
		}
	default:
		return fmt.Errorf("index format %d", h[6])
	}
	if string(data[:min(len(data), len(dm))]) != dm {
		return fmt.Errorf("data marker")
	}
	if want := len(dm) + 8*nl*len(rows); len(data) != want {
		return fmt.Errorf("data of %d bytes, want %d for %d rows of %d locations", len(data), want, len(rows), nl)
	}
	vals := map[int][]float64{}
	p := data[len(dm):]
	for _, c := range rows {
		row := make([]float64, nl)
		for l := range nl {
			u := binary.LittleEndian.Uint64(p)
			p = p[8:]
			if d.metrics[id].dtype == "UINT64" {
				row[l] = float64(u)
			} else {
				row[l] = math.Float64frombits(u)
			}
		}
		vals[c] = row
	}
	d.values[id] = vals
	return nil
}

// value is metric name's stored value at call path c and location l.
func (d *decoded) value(name string, c, l int) float64 {
	id, ok := d.byName[name]
	if !ok {
		panic("no metric " + name)
	}
	row := d.values[id][c]
	if row == nil {
		return 0
	}
	return row[l]
}

// path is call path c as its regions' names from the root, joined by " / ".
func (d *decoded) path(c int) string {
	var parts []string
	for ; c >= 0; c = d.cnodes[c].parent {
		parts = append(parts, d.regions[d.cnodes[c].callee].name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, " / ")
}

// children lists the metric ids whose parent is id.
func (d *decoded) children(id int) []int {
	var out []int
	for i, m := range d.metrics {
		if m.parent == id {
			out = append(out, i)
		}
	}
	return out
}
