package procgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// rng draws the random choices of one catalog entry or event: a PCG
// seeded by (seed, index), so that each is a function of its index.
type rng struct{ p rand.PCG }

func newRNG(seed, salt, index uint64) *rng {
	r := &rng{}
	r.p.Seed(seed^salt, index)
	return r
}

func (r *rng) intn(n int) int         { return int(r.p.Uint64() % uint64(n)) }
func (r *rng) float() float64         { return float64(r.p.Uint64()>>11) / (1 << 53) }
func (r *rng) pick(s []string) string { return s[r.intn(len(s))] }

// hex appends n random lowercase hexadecimal digits.
func (r *rng) hex(b *strings.Builder, n int) {
	const digits = "0123456789abcdef"
	for range n {
		b.WriteByte(digits[r.intn(16)])
	}
}

func (r *rng) guid() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range []int{8, 4, 4, 4, 12} {
		if i > 0 {
			b.WriteByte('-')
		}
		r.hex(&b, n)
	}
	b.WriteByte('}')
	return strings.ToUpper(b.String())
}

func (r *rng) word() string { return r.pick(words) }

// zipf samples ranks 0..n-1 with probability proportional to
// 1/(rank+1)^s, by binary search in the cumulative weights.
type zipf struct{ cdf []float64 }

func newZipf(n int, s float64) zipf {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return zipf{cdf: cdf}
}

func (z zipf) sample(u float64) int {
	i := sort.SearchFloat64s(z.cdf, u)
	return min(i, len(z.cdf)-1)
}

// process is what a process-creation event says of the process.
type process struct {
	parent, image, cmd string
}

var (
	words    = []string{"report", "backup", "sync", "deploy", "update", "cleanup", "export", "import", "monitor", "build", "test", "invoice", "payroll", "metrics", "agent", "cache", "index", "archive", "rotate", "notify"}
	services = []string{"netsvcs", "LocalService", "LocalServiceNetworkRestricted", "DcomLaunch", "RPCSS", "UnistackSvcGroup", "LocalSystemNetworkRestricted", "NetworkService", "utcsvc", "wusvcs"}
	svcNames = []string{"Schedule", "BITS", "Winmgmt", "wuauserv", "Dnscache", "EventLog", "LanmanServer", "Themes", "CryptSvc", "TrkWks", "WinHttpAutoProxySvc", "gpsvc"}
	apps     = []string{"billing", "inventory", "gateway", "search", "ingest", "auth", "reports", "scheduler"}
	pkgs     = []string{"openssl", "curl", "nginx", "python3-requests", "libssl3", "tzdata", "ca-certificates", "git"}
	domains  = []string{"updates.example.com", "cdn.example.net", "api.example.org", "files.example.com", "mirror.example.net"}
	linuxCmd = []string{"ls -la /var/log", "df -h", "ps aux", "systemctl status nginx", "tail -n 100 /var/log/syslog", "uptime", "free -m", "cat /etc/os-release"}
	winCmd   = []string{"dir C:\\Users", "ipconfig /all", "whoami /groups", "tasklist /v", "net use", "systeminfo", "netstat -ano", "hostname"}
)

// templates make a process; fresh ones vary what a repeated one keeps.
var templates = []struct {
	weight int
	make   func(r *rng, fresh bool) process
}{
	{20, func(r *rng, fresh bool) process {
		if fresh { // a per-user service, named with a random suffix
			var b strings.Builder
			b.WriteString(`C:\Windows\system32\svchost.exe -k UnistackSvcGroup -s CDPUserSvc_`)
			r.hex(&b, 6)
			return process{`C:\Windows\System32\services.exe`, `C:\Windows\System32\svchost.exe`, b.String()}
		}
		return process{`C:\Windows\System32\services.exe`, `C:\Windows\System32\svchost.exe`,
			`C:\Windows\system32\svchost.exe -k ` + r.pick(services) + ` -p -s ` + r.pick(svcNames)}
	}},
	{10, func(r *rng, fresh bool) process {
		c := r.pick(winCmd)
		if fresh {
			c = `copy C:\Users\Public\` + r.word() + `_` + strconv.Itoa(r.intn(100000)) + `.tmp C:\Temp\`
		}
		return process{`C:\Windows\explorer.exe`, `C:\Windows\System32\cmd.exe`, `"C:\Windows\system32\cmd.exe" /c ` + c}
	}},
	{8, func(r *rng, fresh bool) process {
		var b strings.Builder
		b.WriteString(`powershell.exe -NoProfile -ExecutionPolicy Bypass -File C:\ProgramData\scripts\`)
		b.WriteString(r.word())
		if fresh {
			b.WriteByte('_')
			r.hex(&b, 8)
		}
		b.WriteString(`.ps1`)
		return process{`C:\Windows\System32\cmd.exe`, `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, b.String()}
	}},
	{2, func(r *rng, fresh bool) process {
		var b strings.Builder
		b.WriteString(`powershell.exe -nop -w hidden -EncodedCommand `)
		const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		for range 40 + r.intn(80) {
			b.WriteByte(b64[r.intn(64)])
		}
		return process{`C:\Program Files\Microsoft Office\root\Office16\WINWORD.EXE`,
			`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, b.String()}
	}},
	{12, func(r *rng, fresh bool) process {
		var b strings.Builder
		b.WriteString(`"C:\Program Files\Google\Chrome\Application\chrome.exe" --type=`)
		b.WriteString(r.pick([]string{"renderer", "gpu-process", "utility", "crashpad-handler"}))
		b.WriteString(` --lang=en-US --field-trial-handle=`)
		b.WriteString(strconv.Itoa(1000 + r.intn(9000)))
		if fresh {
			b.WriteString(` --renderer-client-id=`)
			b.WriteString(strconv.Itoa(r.intn(100000)))
			b.WriteString(` --launch-time-ticks=`)
			b.WriteString(strconv.Itoa(r.intn(1 << 30)))
		}
		return process{`C:\Program Files\Google\Chrome\Application\chrome.exe`,
			`C:\Program Files\Google\Chrome\Application\chrome.exe`, b.String()}
	}},
	{10, func(r *rng, fresh bool) process {
		app := r.pick(apps)
		cmd := `/usr/bin/python3 /opt/` + app + `/bin/` + r.word() + `.py --config /etc/` + app + `/config.yaml`
		if fresh {
			cmd += ` --run-id ` + strconv.Itoa(r.intn(1<<30))
		}
		return process{`/usr/lib/systemd/systemd`, `/usr/bin/python3`, cmd}
	}},
	{10, func(r *rng, fresh bool) process {
		c := r.pick(linuxCmd)
		if fresh {
			c = `tar czf /tmp/` + r.word() + `-` + strconv.Itoa(r.intn(1000000)) + `.tar.gz /var/lib/` + r.pick(apps)
		}
		return process{`/usr/sbin/sshd`, `/bin/bash`, `/bin/bash -c ` + c}
	}},
	{6, func(r *rng, fresh bool) process {
		url := `https://` + r.pick(domains) + `/` + r.word() + `/latest.tar.gz`
		if fresh {
			url = `https://` + r.pick(domains) + `/` + r.word() + `/` + strconv.Itoa(r.intn(1000000)) + `.bin`
		}
		return process{`/bin/bash`, `/usr/bin/curl`, `curl -fsSL ` + url + ` -o /tmp/` + r.word()}
	}},
	{6, func(r *rng, fresh bool) process {
		pkg := r.pick(pkgs)
		if fresh {
			pkg += "=" + strconv.Itoa(r.intn(10)) + "." + strconv.Itoa(r.intn(100)) + "." + strconv.Itoa(r.intn(1000)) + "-" + strconv.Itoa(r.intn(100))
		}
		return process{`/usr/bin/sudo`, `/usr/bin/apt-get`, `apt-get install -y ` + pkg}
	}},
	{4, func(r *rng, fresh bool) process {
		task := r.word()
		if fresh {
			task += strconv.Itoa(r.intn(100000))
		}
		return process{`C:\Windows\System32\cmd.exe`, `C:\Windows\System32\schtasks.exe`,
			`schtasks /create /tn ` + task + ` /tr C:\ProgramData\` + task + `.exe /sc daily /st 0` + strconv.Itoa(r.intn(10)) + `:00`}
	}},
	{3, func(r *rng, fresh bool) process {
		if fresh {
			return process{`C:\Windows\System32\cmd.exe`, `C:\Windows\System32\net.exe`,
				`net user u` + strconv.Itoa(r.intn(1<<30)) + ` P@ss` + strconv.Itoa(r.intn(1<<30)) + ` /add`}
		}
		return process{`C:\Windows\System32\cmd.exe`, `C:\Windows\System32\net.exe`,
			`net user ` + r.pick([]string{"administrator", "svc_backup", "guest", "j.doe"}) + ` /domain`}
	}},
	{2, func(r *rng, fresh bool) process {
		return process{`C:\Windows\System32\cmd.exe`, `C:\Windows\System32\certutil.exe`,
			`certutil.exe -urlcache -split -f http://` + r.pick(domains) + `/` + r.word() + `.txt C:\Users\Public\` + r.word() + freshNumber(r, fresh) + `.exe`}
	}},
	{2, func(r *rng, fresh bool) process {
		g := `{00000000-0000-0000-0000-000000000000}`
		if fresh {
			g = r.guid()
		}
		return process{`C:\Windows\explorer.exe`, `C:\Windows\System32\rundll32.exe`,
			`rundll32.exe C:\Windows\System32\shell32.dll,Control_RunDLL ` + g}
	}},
	{2, func(r *rng, fresh bool) process {
		return process{`C:\Windows\System32\wbem\WmiPrvSE.exe`, `C:\Windows\System32\wbem\WMIC.exe`,
			`wmic process call create "` + r.pick(winCmd) + freshNumber(r, fresh) + `"`}
	}},
	{3, func(r *rng, fresh bool) process {
		return process{`C:\Windows\System32\services.exe`, `C:\Windows\System32\msiexec.exe`,
			`C:\Windows\system32\msiexec.exe /V` + freshNumber(r, fresh)}
	}},
}

// freshNumber is "" for a catalog process and a random number otherwise,
// so that a process seen once is not another's twin.
func freshNumber(r *rng, fresh bool) string {
	if !fresh {
		return ""
	}
	return " " + strconv.Itoa(r.intn(1<<30))
}

// templateCDF is the cumulative weight of templates, for drawing one.
var templateCDF = func() []int {
	var out []int
	sum := 0
	for _, t := range templates {
		sum += t.weight
		out = append(out, sum)
	}
	return out
}()

func makeProcess(r *rng, fresh bool) process {
	w := r.intn(templateCDF[len(templateCDF)-1])
	i := sort.SearchInts(templateCDF, w+1)
	return templates[i].make(r, fresh)
}

// hostName and userName name the i-th host and user: the first of each
// are the busiest (Zipf rank order).
func hostName(i int) string {
	switch i % 10 {
	case 0:
		return fmt.Sprintf("srv-%s-%02d.corp.example", apps[(i/10)%len(apps)], i/10/len(apps))
	case 1:
		return fmt.Sprintf("ip-10-0-%d-%d.internal", (i/10)%256, (i/2560)%256)
	default:
		return fmt.Sprintf("WS-%05d", i)
	}
}

var systemUsers = []string{`NT AUTHORITY\SYSTEM`, `NT AUTHORITY\NETWORK SERVICE`, `NT AUTHORITY\LOCAL SERVICE`, "root", "www-data"}

func userName(i int) string {
	if i < len(systemUsers) {
		return systemUsers[i]
	}
	return fmt.Sprintf(`CORP\user%05d`, i)
}

func integrity(user string, r *rng) string {
	switch {
	case strings.HasPrefix(user, `NT AUTHORITY\`):
		return "System"
	case user == "root":
		return "High"
	}
	switch u := r.intn(100); {
	case u < 5:
		return "High"
	case u < 6:
		return "Low"
	}
	return "Medium"
}
