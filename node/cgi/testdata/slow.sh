#!/bin/sh
# Never answers in time.
sleep 30
