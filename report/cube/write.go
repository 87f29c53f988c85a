package cube

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ptrace-dev/ptrace/internal/outfile"
)

// The on-disk format, as CubeW 4.8 writes it and CubeLib 4.8 reads it
// (vendor/cubew/src/cubew/cubew_metric.c, cubew_tar_writing.c; CubeLib's
// CubeTarReader.cpp, CubeIndexHeader.cpp, syntax/Cube4Scanner.ll):
//
//   - A tar archive. CubeLib does not use a tar library: it reads 512-byte
//     headers and takes the next one at header + 512 + (size/512 + 1)·512,
//     one block further than POSIX when a member's size is a multiple of
//     512. Members of such sizes are therefore never written: the anchor
//     is padded with a newline when it would be one, and the binary
//     members' sizes (10 + 8k and 22 + 4k bytes) never are. Both CubeLib
//     and ordinary tar readers then see the same members.
//   - anchor.xml: the definitions. CubeLib's scanner matches fixed tokens
//     (`<cube version="4.4">`, `<metric id=`, ...), not general XML, so the
//     writer keeps CubeW's layout: one element per line, attributes in
//     CubeW's order, the five XML entities escaped.
//   - Per metric with values, N.index and N.data (N its id). The index is
//     "CUBEX.INDEX", uint32 1 (byte order), uint16 0 (version), uint8 1
//     (sparse), uint32 count and count uint32 call-path positions; the
//     data is "CUBEX.DATA" and one row per listed call path of one value
//     per location (float64 or uint64, location id order). For an
//     EXCLUSIVE metric a call path's position is its place in the
//     preorder walk of the call tree, which is how ids are given here.

const (
	anchorName  = "anchor.xml"
	indexMarker = "CUBEX.INDEX"
	dataMarker  = "CUBEX.DATA"
	// formatSparse is CubeW's CUBE_INDEX_FORMAT_SPARSE.
	formatSparse = 1
	// anchorVersion is the anchor syntax CubeW 4.8.2 writes.
	anchorVersion = "4.4"
	tarBlock      = 512
)

// Write writes f as a .cubex archive to w.
func (f *File) Write(w io.Writer) error {
	ly, err := f.number()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	tw := tar.NewWriter(bw)
	anchor := f.anchor(ly)
	if len(anchor)%tarBlock == 0 {
		anchor = append(anchor, '\n')
	}
	if err := member(tw, anchorName, int64(len(anchor))); err != nil {
		return err
	}
	if _, err := tw.Write(anchor); err != nil {
		return err
	}
	row := make([]byte, 8*len(ly.locs))
	for id, m := range ly.metrics {
		rows := dataRows(m, ly)
		if len(rows) == 0 {
			continue // a metric without values needs no files (as Score-P writes)
		}
		index := make([]byte, 0, len(indexMarker)+11+4*len(rows))
		index = append(index, indexMarker...)
		index = binary.LittleEndian.AppendUint32(index, 1)
		index = binary.LittleEndian.AppendUint16(index, 0)
		index = append(index, formatSparse)
		index = binary.LittleEndian.AppendUint32(index, uint32(len(rows)))
		for _, c := range rows {
			index = binary.LittleEndian.AppendUint32(index, uint32(ly.cnodeID[c]))
		}
		name := strconv.Itoa(id)
		if err := member(tw, name+".index", int64(len(index))); err != nil {
			return err
		}
		if _, err := tw.Write(index); err != nil {
			return err
		}
		size := int64(len(dataMarker)) + int64(len(rows))*int64(len(row))
		if err := member(tw, name+".data", size); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, dataMarker); err != nil {
			return err
		}
		for _, c := range rows {
			clear(row)
			for l, v := range m.vals[c] {
				i := 8 * ly.locID[l]
				if m.DType == Uint64 {
					binary.LittleEndian.PutUint64(row[i:], uint64(v))
				} else {
					binary.LittleEndian.PutUint64(row[i:], math.Float64bits(v))
				}
			}
			if _, err := tw.Write(row); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// dataRows lists the call paths where m has a nonzero value, in id order.
func dataRows(m *Metric, ly *layout) []*Cnode {
	var rows []*Cnode
	for c, row := range m.vals {
		for _, v := range row {
			if v != 0 {
				rows = append(rows, c)
				break
			}
		}
	}
	slices.SortFunc(rows, func(a, b *Cnode) int { return ly.cnodeID[a] - ly.cnodeID[b] })
	return rows
}

// member starts a tar member. The fixed time and owner make the archive a
// function of its content.
func member(tw *tar.Writer, name string, size int64) error {
	return tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Size:     size,
		Mode:     0o600,
		ModTime:  time.Unix(0, 0),
		Uname:    "ptrace",
		Gname:    "ptrace",
		Format:   tar.FormatUSTAR,
	})
}

// WriteFile writes f to path, which must end in ".cubex" (CubeLib's tools
// open no other name), through a temporary file in the same directory
// renamed over path once complete (internal/outfile): a failed write
// leaves no partial file and keeps what path held.
func (f *File) WriteFile(path string) error {
	if err := CheckName(path); err != nil || path == "" {
		return cmp.Or(err, fmt.Errorf("no file name"))
	}
	return outfile.Write(path, f.Write)
}

// anchor renders the definitions in CubeW's layout.
func (f *File) anchor(ly *layout) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n")
	fmt.Fprintf(&b, "<cube version=\"%s\">\n", anchorVersion)
	b.WriteString("<attr key=\"CubePL Version\" value=\"1.1\"/>\n")
	b.WriteString("<attr key=\"Cube Version\" value=\"4.8.2\"/>\n")
	fmt.Fprintf(&b, "<attr key=\"Cube anchor.xml syntax version\" value=\"%s\"/>\n", anchorVersion)
	for _, a := range f.Attrs {
		fmt.Fprintf(&b, "<attr key=\"%s\" value=\"%s\"/>\n", esc(a.Key), esc(a.Value))
	}
	b.WriteString("<doc>\n<mirrors>\n</mirrors>\n</doc>\n")
	b.WriteString("<metrics>\n")
	var metric func(m *Metric)
	metric = func(m *Metric) {
		fmt.Fprintf(&b, "<metric id=\"%d\" type=\"EXCLUSIVE\">\n", ly.metID[m])
		disp := m.Disp
		if disp == "" {
			disp = m.Name
		}
		fmt.Fprintf(&b, "<disp_name>%s</disp_name>\n", esc(disp))
		fmt.Fprintf(&b, "<uniq_name>%s</uniq_name>\n", esc(m.Name))
		fmt.Fprintf(&b, "<dtype>%s</dtype>\n", m.DType)
		fmt.Fprintf(&b, "<uom>%s</uom>\n", esc(m.Unit))
		fmt.Fprintf(&b, "<url>%s</url>\n", esc(m.URL))
		fmt.Fprintf(&b, "<descr>%s</descr>\n", esc(m.Descr))
		for _, c := range m.Children {
			metric(c)
		}
		b.WriteString("</metric>\n")
	}
	for _, m := range f.Metrics {
		metric(m)
	}
	b.WriteString("</metrics>\n<program>\n")
	for id, r := range ly.regions {
		mangled := r.Mangled
		if mangled == "" {
			mangled = r.Name
		}
		fmt.Fprintf(&b, "<region id=\"%d\" mod=\"%s\" begin=\"%d\" end=\"%d\">\n", id, esc(r.Mod), r.Begin, r.End)
		fmt.Fprintf(&b, "<name>%s</name>\n", esc(r.Name))
		fmt.Fprintf(&b, "<mangled_name>%s</mangled_name>\n", esc(mangled))
		fmt.Fprintf(&b, "<paradigm>%s</paradigm>\n", esc(r.Paradigm))
		fmt.Fprintf(&b, "<role>%s</role>\n", esc(r.Role))
		fmt.Fprintf(&b, "<url>%s</url>\n", esc(r.URL))
		fmt.Fprintf(&b, "<descr>%s</descr>\n", esc(r.Descr))
		b.WriteString("</region>\n")
	}
	var cnode func(c *Cnode)
	cnode = func(c *Cnode) {
		fmt.Fprintf(&b, "<cnode id=\"%d\" ", ly.cnodeID[c])
		if c.Line != -1 {
			fmt.Fprintf(&b, "line=\"%d\" ", c.Line)
		}
		if c.Mod != "" {
			fmt.Fprintf(&b, "mod=\"%s\" ", esc(c.Mod))
		}
		fmt.Fprintf(&b, "calleeId=\"%d\">\n", ly.regID[c.Callee])
		for _, k := range c.Children {
			cnode(k)
		}
		b.WriteString("</cnode>\n")
	}
	for _, c := range f.Calls {
		cnode(c)
	}
	b.WriteString("</program>\n<system>\n")
	stnID, groupID := 0, 0
	var system func(s *SystemNode)
	system = func(s *SystemNode) {
		fmt.Fprintf(&b, "<systemtreenode Id=\"%d\">\n", stnID)
		stnID++
		fmt.Fprintf(&b, "<name>%s</name>\n", esc(s.Name))
		fmt.Fprintf(&b, "<class>%s</class>\n", esc(s.Class))
		if s.Descr != "" {
			fmt.Fprintf(&b, "<descr>%s</descr>\n", esc(s.Descr))
		}
		for _, g := range s.Groups {
			fmt.Fprintf(&b, "<locationgroup Id=\"%d\">\n", groupID)
			groupID++
			fmt.Fprintf(&b, "<name>%s</name>\n", esc(g.Name))
			fmt.Fprintf(&b, "<rank>%d</rank>\n", g.Rank)
			fmt.Fprintf(&b, "<type>%s</type>\n", esc(g.Type))
			for _, l := range g.Locations {
				fmt.Fprintf(&b, "<location Id=\"%d\">\n", ly.locID[l])
				fmt.Fprintf(&b, "<name>%s</name>\n", esc(l.Name))
				fmt.Fprintf(&b, "<rank>%d</rank>\n", l.Rank)
				fmt.Fprintf(&b, "<type>%s</type>\n", esc(l.Type))
				b.WriteString("</location>\n")
			}
			b.WriteString("</locationgroup>\n")
		}
		for _, k := range s.Children {
			system(k)
		}
		b.WriteString("</systemtreenode>\n")
	}
	for _, s := range f.Machines {
		system(s)
	}
	b.WriteString("<topologies>\n</topologies>\n</system>\n</cube>\n")
	return b.Bytes()
}

// esc escapes s as CubeW does (the five XML entities) after making it
// valid UTF-8 without control characters, which the anchor's UTF-8
// declaration and CubeLib's line-based scanner need: report strings come
// from traces (file and function names) and may hold anything.
func esc(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '"':
			b.WriteString("&quot;")
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckName says whether path can name a CUBE file ("" is no file): CubeLib
// opens only names ending in ".cubex", so a command can refuse another name
// before it analyses anything.
func CheckName(path string) error {
	if path == "" || strings.HasSuffix(path, ".cubex") {
		return nil
	}
	return fmt.Errorf("%s: a CUBE file's name must end in .cubex (CubeLib opens no other)", path)
}
