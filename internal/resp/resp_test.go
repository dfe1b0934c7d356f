package resp

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

func TestCommands(t *testing.T) {
	s := miniredis.RunT(t)
	c := New(Options{Addr: s.Addr()})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Do(ctx, "SET", "k", "v\r\nwith CRLF"); err != nil {
		t.Fatal(err)
	}
	r, err := c.Do(ctx, "GET", "k")
	if s, _ := r.String(); err != nil || s != "v\r\nwith CRLF" {
		t.Fatalf("GET: %q, %v", s, err)
	}
	if _, err := c.Do(ctx, "GET", "missing"); !errors.Is(err, Nil) {
		t.Fatalf("GET of a missing key: %v, want Nil", err)
	}
	rs, err := c.Pipeline(ctx, [][]string{
		{"HSET", "h", "a", "1", "b", ""},
		{"HGETALL", "h"},
		{"INCR", "k"}, // not a number: an error reply, the others fine
		{"EXPIRE", "h", "100"},
		{"HGETALL", "none"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Int != 2 {
		t.Errorf("HSET: %+v", rs[0])
	}
	if m, err := rs[1].Map(); err != nil || len(m) != 2 || m["a"] != "1" || m["b"] != "" {
		t.Errorf("HGETALL: %v, %v", m, err)
	}
	var re Error
	if !errors.As(rs[2].Err(), &re) || !strings.Contains(string(re), "not an integer") {
		t.Errorf("INCR of a string: %v", rs[2].Err())
	}
	if rs[3].Int != 1 || s.TTL("h") != 100*time.Second {
		t.Errorf("EXPIRE: %+v, ttl %v", rs[3], s.TTL("h"))
	}
	if m, err := rs[4].Map(); err != nil || len(m) != 0 {
		t.Errorf("HGETALL of a missing key: %v, %v", m, err)
	}
}

func TestAuthAndDB(t *testing.T) {
	s := miniredis.RunT(t)
	s.RequireUserAuth("u", "secret")
	ctx := context.Background()
	bad := New(Options{Addr: s.Addr(), Username: "u", Password: "wrong"})
	if _, err := bad.Do(ctx, "PING"); err == nil || !strings.HasPrefix(err.Error(), "AUTH: ") {
		t.Fatalf("a wrong password: %v", err)
	}
	o, err := ParseURL("redis://u:secret@" + s.Addr() + "/3")
	if err != nil {
		t.Fatal(err)
	}
	c := New(*o)
	if _, err := c.Do(ctx, "SET", "x", "1"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.DB(3).Get("x"); v != "1" {
		t.Fatalf("SET went elsewhere than database 3: %q", v)
	}
}

func TestReconnect(t *testing.T) {
	s := miniredis.RunT(t)
	c := New(Options{Addr: s.Addr()})
	ctx := context.Background()
	if _, err := c.Do(ctx, "SET", "k", "1"); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	s.Close()
	if _, err := c.Do(ctx, "GET", "k"); err == nil {
		t.Fatal("a command to a stopped server succeeded")
	}
	if err := s.StartAddr(addr); err != nil {
		t.Fatal(err)
	}
	s.Set("k", "2")
	if r, err := c.Do(ctx, "GET", "k"); err != nil || r.Str != "2" {
		t.Fatalf("after the server came back: %+v, %v", r, err)
	}
}

func TestContextEnds(t *testing.T) {
	s := miniredis.RunT(t)
	c := New(Options{Addr: s.Addr()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Do(ctx, "PING"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ url, addr, err string }{
		{"redis://h", "h:6379", ""},
		{"rediss://h:7000/2", "h:7000", ""},
		{"redis://h?db=4", "h:6379", ""},
		{"http://h", "", "scheme"},
		{"redis://h/x", "", "database"},
		{"redis://h?pool=1", "", `unsupported URL parameter "pool" (a Redis URL takes db only)`},
		{"redis://h?DB=1", "", `unsupported URL parameter "DB" (did you mean "db"?) (a Redis URL takes db only)`},
		{"redis://h?db=1&db=2", "", "URL parameter db is given 2 times"},
		{"redis://h/1?db=2", "", `the database is given twice, as the URL's path ("1") and its parameter db`},
		{"redis://h?db=1;x", "", "cannot read the URL's query"},
		{"redis://h?db=x1", "", `invalid database number: "x1"`},
		// A fragment was ignored; an unescaped '#' in a password can
		// make one ("redis://:#pw@h" went to localhost without a password).
		{"redis://h:7000/2#x", "", "a Redis URL has no fragment (after '#'); a '#' in a password is written %23"},
		{"redis://:#pw@h", "", "a Redis URL has no fragment"},
		{"redis://:pa%23ss@h:7000", "h:7000", ""},
	} {
		o, err := ParseURL(tc.url)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one about %s", tc.url, err, tc.err)
		case tc.err == "" && (err != nil || o.Addr != tc.addr):
			t.Errorf("%s: %+v, %v", tc.url, o, err)
		}
	}
}

func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "*-1\r\n", "*1\r\n*1\r\n*0\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Whatever the bytes, a reply or an error, never a panic or a
		// huge allocation from a forged length.
		readReply(bufio.NewReader(strings.NewReader(string(b))), 0)
	})
}
