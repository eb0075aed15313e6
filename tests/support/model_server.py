#!/usr/bin/env python3
"""A deterministic embedding and rerank server for folio's tests (Python standard library only).

It listens on 127.0.0.1 on a free port, prints the port on the first line of
stdout, and serves until it is killed or its lifetime (default 300 s) ends:

- POST /v1/embeddings (OpenAI-compatible): {"model", "input": [..]} ->
  {"data": [{"index", "embedding"}, ..]}, listed in reverse order so that the
  client must sort by index;
- POST /api/embed (Ollama-compatible): {"model", "input": [..]} ->
  {"embeddings": [[..], ..]};
- POST /v1/rerank (Cohere-compatible): {"model", "query", "documents": [..], "top_n"} ->
  {"results": [{"index", "relevance_score"}, ..]}, best first, at most top_n;
- POST /rerank (text-embeddings-inference): {"query", "texts": [..]} ->
  [{"index", "score"}, ..], best first;
- GET /stats -> {"requests", "ok_inputs", "refused_requests", "models", "reranks"}, where
  "reranks" lists each rerank request as {"path", "body"}.

The rerank score of a document is the number of times it contains RERANK-TOP (so a
test chooses which document wins); equal scores keep the order sent.

The vector of a text is not normalised: DIMS values, value j being
1 + the sum of the UTF-8 bytes at positions i with i % DIMS == j.

--mode ok (default): a request with any input containing REFUSE-ME gets 400.
--mode fail500: every embedding and rerank request gets 500 "model crashed".
--mode rerank-twice: a rerank answer scores its first document twice and the last never.
--require-key KEY: a request without "Authorization: Bearer KEY" gets 401.
--delay-ms N: wait N ms before answering an embedding request (for timeouts).
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIMS = 8
MARKER = "REFUSE-ME"

STATS = {"requests": 0, "ok_inputs": 0, "refused_requests": 0, "models": [], "reranks": []}
RERANK_MARKER = "RERANK-TOP"
LOCK = threading.Lock()


def vector(text):
    v = [1.0] * DIMS
    for i, b in enumerate(text.encode("utf-8")):
        v[i % DIMS] += b
    return v


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):  # keep the test output clean
        pass

    def reply(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            with LOCK:
                self.reply(200, STATS)
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if self.path not in ("/v1/embeddings", "/api/embed", "/v1/rerank", "/rerank"):
            self.reply(404, {"error": "no such endpoint: " + self.path})
            return
        with LOCK:
            STATS["requests"] += 1
        if ARGS.delay_ms:
            time.sleep(ARGS.delay_ms / 1000.0)
        if ARGS.require_key and self.headers.get("Authorization") != "Bearer " + ARGS.require_key:
            self.reply(401, {"error": "missing or wrong API key"})
            return
        if ARGS.mode == "fail500":
            self.reply(500, b"model crashed")
            return
        if self.path in ("/v1/rerank", "/rerank"):
            self.rerank(raw)
            return
        try:
            body = json.loads(raw)
            model = body["model"]
            inputs = body["input"]
            if isinstance(inputs, str):
                inputs = [inputs]
            assert all(isinstance(t, str) for t in inputs)
        except Exception as err:  # a malformed request is the client's bug
            self.reply(422, {"error": "bad request body: %s" % err})
            return
        if any(MARKER in t for t in inputs):
            with LOCK:
                STATS["refused_requests"] += 1
            self.reply(400, {"error": "input rejected: contains " + MARKER})
            return
        with LOCK:
            STATS["ok_inputs"] += len(inputs)
            if model not in STATS["models"]:
                STATS["models"].append(model)
        vectors = [vector(t) for t in inputs]
        if self.path == "/api/embed":
            self.reply(200, {"model": model, "embeddings": vectors})
        else:
            data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
            data.reverse()
            self.reply(200, {"object": "list", "model": model, "data": data})

    def rerank(self, raw):
        try:
            body = json.loads(raw)
            query = body["query"]
            docs = body["documents"] if self.path == "/v1/rerank" else body["texts"]
            assert isinstance(query, str) and all(isinstance(d, str) for d in docs)
            top_n = body.get("top_n", len(docs)) if self.path == "/v1/rerank" else len(docs)
        except Exception as err:
            self.reply(422, {"error": "bad request body: %s" % err})
            return
        with LOCK:
            STATS["reranks"].append({"path": self.path, "body": body})
        ranked = sorted(range(len(docs)), key=lambda i: -docs[i].count(RERANK_MARKER))[:top_n]
        scores = [(i, float(docs[i].count(RERANK_MARKER))) for i in ranked]
        if ARGS.mode == "rerank-twice" and scores:
            scores[-1] = (scores[0][0], scores[0][1])
        if self.path == "/v1/rerank":
            self.reply(200, {"id": "test", "results": [{"index": i, "relevance_score": s} for i, s in scores], "meta": {}})
        else:
            self.reply(200, [{"index": i, "score": s} for i, s in scores])


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["ok", "fail500", "rerank-twice"], default="ok")
    parser.add_argument("--require-key", default=None)
    parser.add_argument("--lifetime", type=float, default=300.0)
    parser.add_argument("--delay-ms", type=int, default=0)
    ARGS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # Never outlive a test run that forgot to stop it.
    timer = threading.Timer(ARGS.lifetime, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
