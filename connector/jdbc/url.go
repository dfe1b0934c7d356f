package jdbc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sluicesql/sluice/connector/redact"
	"github.com/sluicesql/sluice/internal/suggest"
)

// dialect is the kind of database a URL names.
type dialect int

const (
	postgres dialect = iota + 1
	mySQL
)

func (d dialect) String() string {
	if d == postgres {
		return "PostgreSQL"
	}
	return "MySQL"
}

// drivers are the JDBC driver classes the 'driver' option may name.
var drivers = map[string]dialect{
	"org.postgresql.Driver":    postgres,
	"com.mysql.cj.jdbc.Driver": mySQL,
	"com.mysql.jdbc.Driver":    mySQL,
	"org.mariadb.jdbc.Driver":  mySQL,
}

// target is a parsed JDBC URL: the dialect and the DSN of its Go driver.
type target struct {
	dialect dialect
	dsn     string
}

// parseURL translates a JDBC URL (jdbc:postgresql://host[:port]/db[?...],
// jdbc:mysql://... or jdbc:mariadb://...) and the credentials into a Go
// DSN: a postgres:// URL for lib/pq, a go-sql-driver/mysql DSN for MySQL.
// user and password override those of the URL's parameters. timeout, if
// not zero, bounds connecting. Its errors quote the URL with its secrets
// masked.
func parseURL(raw, user, password string, timeout time.Duration) (target, error) {
	shown := redact.URL(raw)
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return target{}, fmt.Errorf("url %q is not a JDBC URL (jdbc:postgresql://host:port/db or jdbc:mysql://host:port/db)", shown)
	}
	scheme, _, _ := strings.Cut(rest, ":")
	var d dialect
	switch scheme {
	case "postgresql":
		d = postgres
	case "mysql", "mariadb":
		d = mySQL
	default:
		return target{}, fmt.Errorf("url %q: unsupported database '%s' (supported: postgresql, mysql, mariadb)", shown, scheme)
	}
	u, err := url.Parse(rest)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // not the URL again
		}
		return target{}, fmt.Errorf("url %q: %w", shown, err)
	}
	if u.Host == "" || strings.Contains(u.Host, ",") {
		return target{}, fmt.Errorf("url %q: expected one host, as in %s://host:port/database", shown, scheme)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return target{}, fmt.Errorf("url %q: expected a database name, as in %s://host:port/database", shown, scheme)
	}
	params := u.Query()
	for _, k := range sortedKeys(params) {
		if n := len(params[k]); n > 1 {
			return target{}, fmt.Errorf("url %q: parameter '%s' is given %d times", shown, k, n)
		}
	}
	if user == "" {
		user = params.Get("user")
	}
	if password == "" {
		password = params.Get("password")
	}
	params.Del("user")
	params.Del("password")
	host, port := u.Hostname(), u.Port()
	if d == postgres {
		if port == "" {
			port = "5432"
		}
		dsn, err := postgresDSN(shown, host, port, db, user, password, params, timeout)
		return target{postgres, dsn}, err
	}
	if port == "" {
		port = "3306"
	}
	dsn, err := mysqlDSN(shown, host, port, db, user, password, params, timeout)
	return target{mySQL, dsn}, err
}

// postgresParams are the parameters of PostgreSQL's JDBC driver that a
// URL may have, for messages.
var postgresParams = []string{"user", "password", "sslmode", "ssl", "connectTimeout", "ApplicationName", "currentSchema"}

// sslModes are the values of PostgreSQL's sslmode.
var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

func postgresDSN(shown, host, port, db, user, password string, params url.Values, timeout time.Duration) (string, error) {
	q := url.Values{}
	for _, k := range sortedKeys(params) {
		v := params.Get(k)
		switch k {
		case "sslmode":
			if !slices.Contains(sslModes, v) {
				return "", fmt.Errorf("url %q: unsupported sslmode '%s' (expected %s)", shown, v, strings.Join(sslModes, ", "))
			}
			q.Set("sslmode", v)
		case "ssl":
			// As PostgreSQL's JDBC driver reads it: true (or no value)
			// verifies the server's certificate and host name, as
			// verify-full; sslmode, when given, wins.
			switch strings.ToLower(v) {
			case "", "true":
				if !params.Has("sslmode") {
					q.Set("sslmode", "verify-full")
				}
			case "false":
			default:
				return "", fmt.Errorf("url %q: parameter ssl=%s must be true or false", shown, v)
			}
		case "connectTimeout": // seconds; 0: none
			n, err := strconv.ParseUint(v, 10, 31)
			if err != nil {
				return "", fmt.Errorf("url %q: connectTimeout=%s is not a whole number of seconds", shown, v)
			}
			q.Set("connect_timeout", strconv.FormatUint(n, 10))
		case "ApplicationName":
			q.Set("application_name", v)
		case "currentSchema":
			q.Set("search_path", v)
		default:
			return "", fmt.Errorf("url %q: unsupported parameter '%s'%s (supported: %s)", shown, k, suggest.Hint(k, postgresParams), strings.Join(postgresParams, ", "))
		}
	}
	if q.Get("sslmode") == "" {
		// TLS if the server offers it, as PostgreSQL's JDBC driver and
		// libpq do (lib/pq's own default is require).
		q.Set("sslmode", "prefer")
	}
	if timeout > 0 && q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", strconv.Itoa(max(1, int(timeout/time.Second))))
	}
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(host, port), Path: "/" + db, RawQuery: q.Encode()}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else if user != "" {
		u.User = url.User(user)
	}
	return u.String(), nil
}

func mysqlDSN(shown, host, port, db, user, password string, params url.Values, timeout time.Duration) (string, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", net.JoinHostPort(host, port), db
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Read TIMESTAMP columns as UTC, like DATETIME ones.
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	cfg.Timeout = timeout
	for _, k := range sortedKeys(params) {
		v := params.Get(k)
		switch k {
		case "useSSL":
			on, err := jdbcBool(v)
			if err != nil {
				return "", fmt.Errorf("url %q: parameter useSSL=%s %v", shown, v, err)
			}
			if params.Has("sslMode") {
				continue // sslMode wins, as in MySQL's JDBC driver
			}
			if on {
				cfg.TLSConfig = "preferred"
			} else {
				cfg.TLSConfig = "false"
			}
		case "sslMode":
			switch strings.ToUpper(v) {
			case "DISABLED":
				cfg.TLSConfig = "false"
			case "PREFERRED":
				cfg.TLSConfig = "preferred"
			case "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY":
				cfg.TLSConfig = "true"
			default:
				return "", fmt.Errorf("url %q: unsupported sslMode '%s'", shown, v)
			}
		case "connectTimeout": // milliseconds; 0: none
			ms, err := strconv.ParseUint(v, 10, 31)
			if err != nil {
				return "", fmt.Errorf("url %q: connectTimeout %q is not a whole number of milliseconds", shown, v)
			}
			cfg.Timeout = time.Duration(ms) * time.Millisecond
		case "characterEncoding":
			// The Go driver always speaks utf8mb4 (the server converts
			// what its columns hold): UTF-8 is all it can be asked for.
			switch strings.ToLower(strings.ReplaceAll(v, "-", "")) {
			case "utf8", "utf8mb4":
			default:
				return "", fmt.Errorf("url %q: characterEncoding=%s is not supported: the connection speaks UTF-8 (utf8mb4), whatever the columns' character sets; leave the parameter out", shown, v)
			}
		case "useUnicode":
			on, err := jdbcBool(v)
			if err != nil {
				return "", fmt.Errorf("url %q: parameter useUnicode=%s %v", shown, v, err)
			}
			if !on {
				return "", fmt.Errorf("url %q: useUnicode=%s is not supported: the connection speaks UTF-8 (utf8mb4); leave the parameter out", shown, v)
			}
		default:
			return "", fmt.Errorf("url %q: unsupported parameter '%s'%s (supported: %s)", shown, k, suggest.Hint(k, mysqlParams), strings.Join(mysqlParams, ", "))
		}
	}
	return cfg.FormatDSN(), nil
}

// mysqlParams are the parameters of MySQL's JDBC driver that a URL may
// have, for messages.
var mysqlParams = []string{"user", "password", "useSSL", "sslMode", "connectTimeout", "characterEncoding", "useUnicode"}

// jdbcBool reads a boolean parameter as MySQL's JDBC driver does: true,
// false, yes or no, in any case.
func jdbcBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "yes":
		return true, nil
	case "false", "no":
		return false, nil
	}
	return false, errors.New("must be true or false")
}

func sortedKeys(v url.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
