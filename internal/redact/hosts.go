package redact

import (
	"bytes"
	"net/netip"
)

// Private networks whose addresses are masked. Loopback (127.0.0.0/8, ::1)
// and IPv4 link-local (169.254.0.0/16, which holds the well-known cloud
// metadata address) say nothing about a private network and are kept. IPv6
// link-local addresses are masked because they often embed a MAC address.
var privateV6 = []netip.Prefix{
	netip.MustParsePrefix("fc00::/7"),  // unique local
	netip.MustParsePrefix("fe80::/10"), // link-local
}

// findPrivateHosts masks host names that end in one of the private suffixes
// (lower case, as DNS names are written): "db.corp" and "api.svc.internal",
// not "settings.local.json", "time.Local" or a path component "conf/x.local".
func findPrivateHosts(m *Masker, line []byte, sp []span) []span {
	for _, suf := range m.suffixes {
		for off := 0; off < len(line); {
			i := bytes.Index(line[off:], suf)
			if i < 0 {
				break
			}
			i += off
			end := i + len(suf)
			off = end
			if end < len(line) {
				c := line[end]
				if isAlnum(c) || c == '_' || c == '-' || c == '(' {
					continue // a longer label, or a method call
				}
				if c == '.' && end+1 < len(line) && isAlnum(line[end+1]) {
					continue // the suffix is not the end of the name
				}
			}
			if i == 0 || !isAlnum(line[i-1]) {
				continue // a bare suffix
			}
			start := i
			for start > 0 && isHostChar(line[start-1]) {
				start--
			}
			for start < i && (line[start] == '.' || line[start] == '-') {
				start++
			}
			if start > 0 {
				if p := line[start-1]; p == '.' {
					continue // a dotted file name: .env.local
				} else if p == '/' && (start < 2 || line[start-2] != '/') {
					continue // a path component, not //host
				}
			}
			if identSuffix(suf) && !hostLike(line, start, i, end) {
				continue
			}
			sp = append(sp, span{start: start, end: end})
		}
	}
	return sp
}

// identSuffix reports a suffix that is also a common field name in code
// (r.local, s.cfg.internal, x.private).
func identSuffix(suf []byte) bool {
	switch string(suf) {
	case ".local", ".internal", ".private":
		return true
	}
	return false
}

// hostLike decides whether name = line[start:end], whose suffix starts at i,
// is a host name rather than a selector in code: it is in a URL, an address
// or a DNS lookup, has a port, has a hyphen (no identifier has one), or has
// at least three labels before the suffix (svc.cluster.local names).
func hostLike(line []byte, start, i, end int) bool {
	name := line[start:i]
	if bytes.IndexByte(name, '-') >= 0 || bytes.Count(name, []byte(".")) >= 2 {
		return true
	}
	if end+1 < len(line) && line[end] == ':' && isDigit(line[end+1]) {
		return true
	}
	before := line[:start]
	for _, p := range []string{"//", "@", "lookup ", "host ", "Host: ", "host=", "host: ", "hostname "} {
		if bytes.HasSuffix(before, []byte(p)) {
			return true
		}
	}
	return false
}

func isHostChar(c byte) bool { return isAlnum(c) || c == '-' || c == '.' || c == '_' }

// findPrivateIPv4 masks dotted-quad addresses in 10.0.0.0/8, 172.16.0.0/12,
// 192.168.0.0/16 and 100.64.0.0/10 (carrier-grade NAT). A port or prefix
// length after the address is kept.
func findPrivateIPv4(_ *Masker, line []byte, sp []span) []span {
	for i := 0; i < len(line); i++ {
		if !isDigit(line[i]) || (i > 0 && (isAlnum(line[i-1]) || line[i-1] == '.')) {
			continue
		}
		var oct [4]int
		j := i
		ok := true
		for k := 0; k < 4 && ok; k++ {
			if k > 0 {
				if j >= len(line) || line[j] != '.' {
					ok = false
					break
				}
				j++
			}
			n, d := 0, 0
			for j < len(line) && isDigit(line[j]) && d < 4 {
				n = n*10 + int(line[j]-'0')
				j++
				d++
			}
			if d == 0 || d > 3 || n > 255 {
				ok = false
			}
			oct[k] = n
		}
		if !ok {
			// Skip the rest of this run of digits and dots.
			for i+1 < len(line) && (isDigit(line[i+1]) || line[i+1] == '.') {
				i++
			}
			continue
		}
		if j < len(line) && (isAlnum(line[j]) || (line[j] == '.' && j+1 < len(line) && isDigit(line[j+1]))) {
			i = j
			continue // part of something longer: a version, a fifth component
		}
		if privateV4(oct) {
			sp = append(sp, span{start: i, end: j})
		}
		i = j
	}
	return sp
}

func privateV4(o [4]int) bool {
	switch {
	case o[0] == 10:
		return true
	case o[0] == 172 && o[1]&0xf0 == 16:
		return true
	case o[0] == 192 && o[1] == 168:
		return true
	case o[0] == 100 && o[1]&0xc0 == 64:
		return true
	}
	return false
}

// findPrivateIPv6 masks unique-local (fc00::/7) and link-local (fe80::/10)
// addresses, with their zone ("fe80::1%eth0").
func findPrivateIPv6(_ *Masker, line []byte, sp []span) []span {
	if bytes.IndexByte(line, ':') < 0 {
		return sp
	}
	for i := 0; i+5 <= len(line); i++ {
		// A private address starts with a full first group fc.., fd.. or fe8-feb.
		if line[i] != 'f' && line[i] != 'F' {
			continue
		}
		if i > 0 && (isAlnum(line[i-1]) || line[i-1] == ':' || line[i-1] == '.') {
			continue
		}
		if !isHex(line[i+1]) || !isHex(line[i+2]) || !isHex(line[i+3]) || line[i+4] != ':' {
			continue
		}
		j := i
		for j < len(line) && (isHex(line[j]) || line[j] == ':' || line[j] == '.') {
			j++
		}
		if j < len(line) && isAlnum(line[j]) {
			continue
		}
		cand := line[i:j]
		for len(cand) > 0 && (cand[len(cand)-1] == '.' || (cand[len(cand)-1] == ':' && !bytes.HasSuffix(cand, []byte("::")))) {
			cand = cand[:len(cand)-1]
		}
		addr, err := netip.ParseAddr(string(cand))
		if err != nil || !addr.Is6() {
			continue
		}
		private := false
		for _, p := range privateV6 {
			if p.Contains(addr) {
				private = true
			}
		}
		if !private {
			continue
		}
		e := i + len(cand)
		if e < len(line) && line[e] == '%' {
			z := e + 1
			for z < len(line) && (isAlnum(line[z]) || line[z] == '_' || line[z] == '-' || line[z] == '.') {
				z++
			}
			if z > e+1 {
				e = z
			}
		}
		sp = append(sp, span{start: i, end: e})
		i = e
	}
	return sp
}
