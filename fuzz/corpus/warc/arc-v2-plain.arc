filedesc://seed.arc 0.0.0.0 20080430204825 text/plain 200 - - 0 seed.arc 121
2 0 Alexa Internet
URL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length

http://v2.example/ 192.0.2.1 20080430204825 text/html 200 abcdef0123 - 1234 seed.arc 138
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
