/* NewsAPI error codes, their HTTP statuses and default messages (API.md §5),
 * and the error envelope {"status":"error","code":…,"message":…}. */
#ifndef NEWSD_API_ERROR_H
#define NEWSD_API_ERROR_H

#include "http/http.h"

/* X(enum, code string, HTTP status, default message or NULL) */
#define API_ERROR_MAP(X)                                                                           \
    X(API_ERR_KEY_MISSING, "apiKeyMissing", 401,                                                   \
      "Your API key is missing. Append this to the URL with the apiKey param, or use the "         \
      "x-api-key HTTP header.")                                                                    \
    X(API_ERR_KEY_INVALID, "apiKeyInvalid", 401,                                                   \
      "Your API key is invalid or incorrect. Check your key, or contact the administrator of "     \
      "this server to get one.")                                                                   \
    X(API_ERR_KEY_DISABLED, "apiKeyDisabled", 401, "Your API key has been disabled.")              \
    X(API_ERR_KEY_EXHAUSTED, "apiKeyExhausted", 429,                                               \
      "Your API key has no more requests available for this period.")                              \
    X(API_ERR_RATE_LIMITED, "rateLimited", 429,                                                    \
      "You have made too many requests in a short time. Back off and try again in a moment.")      \
    X(API_ERR_PARAMETERS_MISSING, "parametersMissing", 400, NULL)                                  \
    X(API_ERR_PARAMETERS_INCOMPATIBLE, "parametersIncompatible", 400,                              \
      "You cannot mix the sources parameter with the country or category parameters.")             \
    X(API_ERR_PARAMETER_INVALID, "parameterInvalid", 400, NULL)                                    \
    X(API_ERR_HISTORY, "parameterInvalid", 426, NULL)                                              \
    X(API_ERR_SOURCES_TOO_MANY, "sourcesTooMany", 400,                                             \
      "You have requested too many sources in a single request. Try splitting the request into "   \
      "2 smaller requests.")                                                                       \
    X(API_ERR_SOURCE_DOES_NOT_EXIST, "sourceDoesNotExist", 400, NULL)                              \
    X(API_ERR_MAXIMUM_RESULTS, "maximumResultsReached", 426, NULL)                                 \
    X(API_ERR_TOO_MANY_STREAMS, "tooManyStreams", 429, NULL)                                       \
    X(API_ERR_EXPORT_LIMIT, "exportLimitReached", 429, NULL)                                       \
    /* sent as an `event: error` of a 200 stream, not as a status of its own */                    \
    X(API_ERR_STREAM_POSITION_EXPIRED, "streamPositionExpired", 200, NULL)                         \
    X(API_ERR_ROUTE_NOT_FOUND, "routeNotFound", 404,                                               \
      "The route you requested does not exist. The endpoints are /v2/top-headlines, "              \
      "/v2/everything and /v2/top-headlines/sources.")                                             \
    X(API_ERR_FORBIDDEN, "forbidden", 403,                                                         \
      "This address may not read this path (the server's metrics_allow_networks).")                \
    X(API_ERR_METHOD_NOT_ALLOWED, "methodNotAllowed", 405,                                         \
      "This method is not allowed. Use GET, HEAD or OPTIONS.")                                     \
    X(API_ERR_URL_TOO_LARGE, "requestTooLarge", 414,                                               \
      "The request URL is too long. The limit is 8 KiB.")                                          \
    X(API_ERR_HEADERS_TOO_LARGE, "requestTooLarge", 431,                                           \
      "The request headers are too large. The limit is 16 KiB.")                                   \
    X(API_ERR_BODY_NOT_ALLOWED, "requestTooLarge", 413,                                            \
      "This endpoint takes no request body. Send the parameters in the query string.")             \
    X(API_ERR_BODY_TOO_LARGE, "requestTooLarge", 413,                                              \
      "The request body is too large or has no Content-Length. The limit is 16 KiB.")              \
    X(API_ERR_ALERT_NOT_FOUND, "alertNotFound", 404,                                               \
      "You have no alert with this id. GET /v2/alerts lists yours.")                               \
    X(API_ERR_TOO_MANY_ALERTS, "tooManyAlerts", 403, NULL)                                         \
    X(API_ERR_STORY_NOT_FOUND, "storyNotFound", 404,                                               \
      "There is no story with this id that your key may read. Story ids come from "                \
      "/v2/stories and from the storyId of dedupe=true.")                                          \
    X(API_ERR_ARTICLE_NOT_FOUND, "articleNotFound", 404,                                           \
      "No stored article that your key may read has the address given in similarTo. Pass the "     \
      "url of an article this server answered.")                                                   \
    X(API_ERR_UNAVAILABLE, "serviceUnavailable", 503,                                              \
      "The server cannot answer this request right now. Try again in a moment.")                   \
    X(API_ERR_UNEXPECTED, "unexpectedError", 500, NULL)

enum api_error {
#define API_ERR_ENUM_(e, code, status, msg) e,
    API_ERROR_MAP(API_ERR_ENUM_)
#undef API_ERR_ENUM_
};

/* The NewsAPI code string and HTTP status of an error. */
const char *api_error_code(enum api_error e);

/* {"status":"error","code":code,"message":message into out through w, the
 * object left open for keys of the caller's own (an export's nextCursor). */
struct jw;
struct buf;
void api_error_begin(struct jw *w, struct buf *out, const char *code, const char *message);
int api_error_status(enum api_error e);

/* Fill resp with the error envelope. message NULL = the default message
 * (for API_ERR_UNEXPECTED a default naming request_id). */
void api_error_respond(struct http_response *resp, enum api_error e, const char *message,
                       const char *request_id);

#endif
