http://a.example/old page.html 192.0.2.1 19990101000000 text/html 86
HTTP/1.0 200 OK
Content-Type: text/html

<html><title>T</title><p>spaced</p></html>
