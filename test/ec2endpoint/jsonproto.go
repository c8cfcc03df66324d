package ec2endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// jsonError is an error of AWS's JSON protocols: its type (the SDK's
// error code), message, HTTP status and, for SQS, the code its query
// protocol had, which the SDK reports as the code when present.
type jsonError struct {
	Type, Message, QueryCode string
	Status                   int
}

func (e *jsonError) Error() string { return e.Type + ": " + e.Message }

// jsonAction serves one operation of a JSON protocol: the request body in,
// the response document out.
type jsonAction func(r *http.Request, body []byte) (any, error)

// serveJSON serves the JSON protocols on the EC2 listener, told apart by
// X-Amz-Target: SQS (AmazonSQS.*, JSON 1.0), the Price List API
// (AWSPriceListService.*, JSON 1.1) and SSM's GetParameter (AmazonSSM.*,
// JSON 1.1).
func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	service, op, _ := strings.Cut(target, ".")
	contentType := "application/x-amz-json-1.0"
	var act jsonAction
	switch service {
	case "AmazonSQS":
		act = map[string]jsonAction{
			"GetQueueUrl": s.getQueueURL, "ReceiveMessage": s.receiveMessage,
			"DeleteMessage": s.deleteMessage, "SendMessage": s.sendMessage,
		}[op]
	case "AWSPriceListService":
		contentType = "application/x-amz-json-1.1"
		act = map[string]jsonAction{"GetProducts": s.getProducts}[op]
	case "AmazonSSM":
		contentType = "application/x-amz-json-1.1"
		act = map[string]jsonAction{"GetParameter": s.getParameter}[op]
	}
	body, err := io.ReadAll(r.Body)
	switch {
	case err != nil:
		err = &jsonError{Type: "SerializationException", Message: "reading the request: " + err.Error(), Status: http.StatusBadRequest}
	case act == nil:
		err = &jsonError{Type: "com.amazon.coral.service#UnknownOperationException", Message: fmt.Sprintf("The operation %s is not served by this endpoint", target), Status: http.StatusBadRequest}
	}
	if err == nil {
		err = s.authorizeJSON(r.Context(), service, op, body)
		if d, denied := errors.AsType[*denial](err); denied {
			queryCode := ""
			if service == "AmazonSQS" {
				queryCode = "AccessDenied"
			}
			err = d.jsonError(queryCode)
		}
	}
	var resp any
	if err == nil {
		resp, err = act(r, body)
	}
	w.Header().Set("Content-Type", contentType)
	if err != nil {
		var jerr *jsonError
		if !errors.As(err, &jerr) {
			jerr = &jsonError{Type: "InternalFailure", Message: err.Error(), Status: http.StatusInternalServerError}
		}
		if jerr.QueryCode != "" {
			w.Header().Set("X-Amzn-Query-Error", jerr.QueryCode)
		}
		w.WriteHeader(jerr.Status)
		resp = map[string]string{"__type": jerr.Type, "message": jerr.Message}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(resp); err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// decodeJSON reads a request document; a malformed one is the protocols'
// SerializationException.
func decodeJSON(body []byte, into any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, into); err != nil {
		return &jsonError{Type: "SerializationException", Message: "decoding the request: " + err.Error(), Status: http.StatusBadRequest}
	}
	return nil
}
