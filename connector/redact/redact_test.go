package redact

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestSecretKey(t *testing.T) {
	for _, k := range []string{"password", "PASSWORD", "properties.sasl.jaas.config", "http.header.Authorization",
		"http.header.X-Api-Key", "access_token", "token", "properties.ssl.keystore.password", "client-secret",
		"apiKey", "pwd", "properties.ssl.keystore.key", "state.kafka.properties.ssl.keystore.key"} {
		if !SecretKey(k) {
			t.Errorf("SecretKey(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"url", "username", "user", "table-name", "key.format", "key.fields",
		"lookup.cache", "connector", "format", "topic", "cluster.session-timeout", "scan.startup.mode",
		"properties.ssl.keystore.location", "properties.ssl.keystore.certificate.chain", "properties.ssl.truststore.certificates"} {
		if SecretKey(k) {
			t.Errorf("SecretKey(%q) = true, want false", k)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// URLs: user info and secret query parameters.
		{`jdbc:postgresql://h:5432/db?user=u&password=s3cr3t`, `jdbc:postgresql://h:5432/db?user=u&password=xxxxx`},
		{`url "jdbc:mysql://u:pw@h/db" is bad`, `url "jdbc:mysql://u:xxxxx@h/db" is bad`},
		{`Get "http://h/x?id=1&token=abc&api_key=k1": dial tcp`, `Get "http://h/x?id=1&token=xxxxx&api_key=xxxxx": dial tcp`},
		{`Get "https://maps/x?key=AIza1&q=2"`, `Get "https://maps/x?key=xxxxx&q=2"`},
		{`parse "redis://u:secretpw@host:badport/0": invalid port`, `parse "redis://u:xxxxx@host:badport/0": invalid port`},
		{`redis://:onlypass@h:6379`, `redis://:xxxxx@h:6379`},
		// DSNs.
		{`host=h user=u password=pw dbname=d`, `host=h user=u password=xxxxx dbname=d`},
		{`u:pw@tcp(127.0.0.1:3306)/db?parseTime=true`, `u:xxxxx@tcp(127.0.0.1:3306)/db?parseTime=true`},
		// A JAAS config, an option as SQL shows it.
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p w";`,
			`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="xxxxx";`},
		{`'password' = 'hunter2'`, `'password' = 'xxxxx'`},
		// Nothing secret: unchanged.
		{`http://h:80/x?id=1&key.format=json`, `http://h:80/x?id=1&key.format=json`},
		{`key column 'id' = 'x'; url http://h/db`, `key column 'id' = 'x'; url http://h/db`},
		{`jdbc table d: cannot load t: dial tcp 127.0.0.1:1: refused`, `jdbc table d: cannot load t: dial tcp 127.0.0.1:1: refused`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestTextKnownSecrets(t *testing.T) {
	// A library's message that quotes the secret where no pattern sees it,
	// as it is and URL-encoded.
	got := Text(`server said: bad credentials "p@ss/w rd" (p%40ss%2Fw+rd)`, "p@ss/w rd")
	if strings.Contains(got, "ss/w") || strings.Contains(got, "p%40ss") {
		t.Errorf("Text = %q: the secret is still there", got)
	}
	// Short secrets are not masked in free text (they would garble it)...
	if got := Text("table abc", "abc"); got != "table abc" {
		t.Errorf("Text = %q", got)
	}
	// ... but still where they stand as a password.
	if got := Text("jdbc:mysql://h/db?password=abc", "abc"); got != "jdbc:mysql://h/db?password=xxxxx" {
		t.Errorf("Text = %q", got)
	}
}

func TestSecrets(t *testing.T) {
	got := Secrets(map[string]string{
		"connector":                   "http",
		"url":                         "https://user:urlpass@h/api?token=tok123&id=7",
		"password":                    "optpass",
		"http.header.Authorization":   "Bearer bearer-token",
		"properties.sasl.jaas.config": `PlainLoginModule required username="u" password="jaaspass";`,
		"username":                    "someone",
	})
	want := map[string]bool{"urlpass": true, "tok123": true, "optpass": true, "Bearer bearer-token": true,
		"bearer-token": true, "jaaspass": true}
	for _, s := range got {
		if s == "someone" || s == "http" || s == "7" {
			t.Errorf("Secrets lists %q, which is no secret", s)
		}
		delete(want, s)
	}
	for s := range want {
		if !strings.Contains(strings.Join(got, "\n"), s) {
			t.Errorf("Secrets = %q, missing %q", got, s)
		}
	}
}

func TestOption(t *testing.T) {
	if got := Option("password", "pw"); got != Mask {
		t.Errorf("Option(password) = %q", got)
	}
	if got := Option("format", "json"); got != "json" {
		t.Errorf("Option(format) = %q", got)
	}
}

func TestError(t *testing.T) {
	if Error(nil) != nil {
		t.Fatal("Error(nil) != nil")
	}
	base := errors.New("ok")
	if Error(base, "secret") != base {
		t.Error("an error without secrets is not returned as it is")
	}
	err := Error(&fs.PathError{Op: "open", Path: "/x/hunter22", Err: fs.ErrNotExist}, "hunter22")
	if strings.Contains(err.Error(), "hunter22") {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the masked error does not wrap the original")
	}
}
