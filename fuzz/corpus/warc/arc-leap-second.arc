http://a.example/ 192.0.2.1 20161231235960 text/html 138
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
