filedesc://seed.arc 0.0.0.0 20080430204825 text/plain 76
1 1 InternetArchive
URL IP-address Archive-date Content-type Archive-length

http://a.example/ 192.0.2.1 20080430204825 text/html 138
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
WARC/0.17
WARC-Type: response
WARC-Date: 2008-04-30T20:48:25Z
WARC-Record-ID: <urn:uuid:0d6d2e5a-1111-2222-3333-444455556666>
WARC-Target-URI: http://old.example/a
Content-Type: application/http; msgtype=response
Content-Length: 138

HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>

WARC/1.1
WARC-Type: resource
WARC-Date: 2008-04-30T20:48:25Z
WARC-Record-ID: <urn:uuid:0d6d2e5a-1111-2222-3333-444455556666>
WARC-Target-URI: http://r.example/
Content-Type: text/html
Content-Length: 79

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>

