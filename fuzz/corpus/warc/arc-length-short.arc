http://a.example/ 192.0.2.1 20080430204825 text/html 20
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
http://b.example/ 192.0.2.1 20080430204825 text/html 138
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
