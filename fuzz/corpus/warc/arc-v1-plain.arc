filedesc://seed.arc 0.0.0.0 20080430204825 text/plain 76
1 1 InternetArchive
URL IP-address Archive-date Content-type Archive-length

http://www.dryswamp.edu:80/index.html 192.0.2.1 20080430204825 text/html 138
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8

<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
dns:www.dryswamp.edu 192.0.2.1 20080430204825 text/dns 10
192.0.2.1

